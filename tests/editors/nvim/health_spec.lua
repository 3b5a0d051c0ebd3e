-- :checkhealth bonsai without a daemon: a missing command is reported as an
-- error with advice; invalid options are listed.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/helpers.lua")
H.load_plugin()

---@return string[]
local function checkhealth()
  vim.cmd("checkhealth bonsai")
  return H.lines(0)
end

H.test("a missing daemon command is an error with advice", function()
  vim.g.bonsai = { cmd = { "/nonexistent/bin/bonsai", "connect" } }
  local lines = checkhealth()
  H.contains(lines, "OK Neovim 0.")
  H.contains(lines, "OK options are valid")
  H.contains(
    lines,
    "ERROR daemon command not found: `/nonexistent/bin/bonsai` is not an executable"
  )
  H.contains(
    lines,
    "Or point the plugin at it: vim.g.bonsai = { cmd = { '/path/to/bonsai', 'connect' } }"
  )
  H.eq(0, #vim.lsp.get_clients({ name = "bonsai" }), "health started no client")
end)

H.test("a command that exits at once is reported as unreachable", function()
  vim.g.bonsai = { cmd = { "false" }, request_timeout_ms = 3000 }
  local lines = checkhealth()
  H.contains(lines, "OK found `false`")
  H.contains(lines, "ERROR cannot reach the daemon through `false`: `false` exited (code 1")
end)

H.test("invalid options are listed as errors", function()
  vim.g.bonsai = { cmd = { "/nonexistent/bin/bonsai" }, chat = { split = "sideways" } }
  local lines = checkhealth()
  H.contains(
    lines,
    'ERROR chat.split: expected one of vertical, horizontal, tab, current, float, got "sideways" (the default is used)'
  )
end)

H.run()
