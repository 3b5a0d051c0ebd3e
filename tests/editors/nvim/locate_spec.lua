-- Finding bonsai without `cmd`: with nothing on $PATH, the plugin uses the
-- workspace's .venv once the user trusts it (a repository's own executable is
-- never run unasked), and says which one it used.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/helpers.lua")
H.load_plugin()

local real = vim.fn.exepath("bonsai")
local venv_bonsai = vim.fn.getcwd() .. "/.venv/bin/bonsai"

H.test("an untrusted workspace .venv is not run; what was tried is said", function()
  H.truthy(real ~= "", "the test needs bonsai on $PATH to copy it")
  vim.fn.mkdir(".venv/bin", "p")
  vim.fn.writefile(vim.fn.readfile(real, "b"), venv_bonsai, "b")
  vim.fn.setfperm(venv_bonsai, "rwxr-xr-x")
  vim.env.PATH = "/nonexistent" -- no bonsai, no python3
  local found, tried = require("bonsai.locate").find(vim.fn.getcwd())
  H.eq(nil, found)
  local said = table.concat(tried, ", ")
  H.contains(said, "the workspace's .venv (not trusted: run :trust on " .. venv_bonsai .. ")")
  H.contains(said, "~/.local/bin")
  H.contains(said, "python3 -m bonsai")
  local _, err = require("bonsai.client").ensure()
  H.contains(err, "bonsai was not found (looked at bonsai on $PATH, the workspace's .venv (not trusted")
end)

H.test("a trusted workspace .venv is found, used and named", function()
  vim.cmd.edit(venv_bonsai) -- what `:trust` does in the file's buffer
  H.truthy(vim.secure.trust({ action = "allow", bufnr = 0 }), "trusted")
  vim.cmd("bwipeout")
  local notes = H.capture_notify()
  local client = require("bonsai.client")
  H.truthy(client.ensure(), "the client starts")
  H.eq(venv_bonsai, client.get().config.cmd[1])
  local status = client.request_sync(require("bonsai.protocol").methods.daemon_status, {}, 30000)
  H.truthy(status and status.pid, "the daemon answers through the .venv's bonsai")
  H.contains(notes[1].msg, "bonsai: using the workspace's .venv (" .. venv_bonsai .. ")")
end)

H.run()
