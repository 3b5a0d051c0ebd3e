-- A workspace holding a `bonsai/` package of its own. With no `bonsai` executable
-- found, the plugin probes `python3 -c "import bonsai"` and runs `python3 -m bonsai
-- connect` from Neovim's directory, the workspace: Python puts that directory first
-- on sys.path, so the workspace's bonsai/__init__.py ran instead of bonsai. With -P
-- neither the probe nor the bridge (nor the daemon it starts) imports it.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/helpers.lua")
H.load_plugin()

local workspace = vim.fn.getcwd()
local marker = workspace .. "/../planted-code-ran"

H.test("python3 -m bonsai is found and run without importing the workspace's bonsai/", function()
  vim.fn.mkdir(workspace .. "/bonsai", "p")
  local planted = {
    "import pathlib",
    "pathlib.Path(" .. vim.fn.json_encode(marker) .. ").write_text('ran')",
    "raise SystemExit('the workspace replaced bonsai')",
  }
  vim.fn.writefile(planted, workspace .. "/bonsai/__init__.py")
  vim.fn.writefile(planted, workspace .. "/bonsai/__main__.py")
  local python = vim.fn.exepath("python3")
  H.truthy(python ~= "", "the test needs the venv's python3 on $PATH")
  local bin = workspace .. "/../only-python"
  vim.fn.mkdir(bin, "p")
  -- a wrapper, not a link: the venv is found from the real executable's path
  vim.fn.writefile({ "#!/bin/sh", "exec " .. vim.fn.shellescape(python) .. ' "$@"' }, bin .. "/python3")
  vim.fn.setfperm(bin .. "/python3", "rwxr-xr-x")
  vim.env.PATH = bin -- no bonsai executable anywhere: the python3 fallback
  local found = require("bonsai.locate").find(workspace)
  H.eq(0, vim.fn.filereadable(marker), "the probe did not import the workspace's bonsai")
  H.truthy(found, "python3 -m bonsai is found")
  H.eq({ "python3", "-P", "-m", "bonsai", "connect" }, found.cmd)
  local client = require("bonsai.client")
  H.truthy(client.ensure(), "the client starts")
  local status = client.request_sync(require("bonsai.protocol").methods.daemon_status, {}, 30000)
  H.truthy(status and status.pid, "the daemon answers through python3 -P -m bonsai")
  H.eq(0, vim.fn.filereadable(marker), "neither the bridge nor the daemon imported it")
end)

H.run()
