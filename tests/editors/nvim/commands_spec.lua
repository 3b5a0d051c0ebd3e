-- The :Bonsai command, its completion, <Plug> mappings, lazy loading and the
-- messages a user sees when something is wrong. No daemon needed.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/helpers.lua")
H.load_plugin()

H.test("sourcing the plugin defines :Bonsai without loading any module", function()
  H.truthy(vim.api.nvim_get_commands({}).Bonsai, ":Bonsai is defined")
  for name in pairs(package.loaded) do
    if name == "bonsai" or vim.startswith(name, "bonsai.") then
      error("module loaded at startup: " .. name)
    end
  end
end)

H.test("<Plug> mappings exist for the main actions", function()
  for _, name in ipairs({
    "chat",
    "send",
    "cancel",
    "ctx",
    "episodes",
    "memory",
    "rules",
    "compact",
    "sessions",
    "smol",
  }) do
    local lhs = ("<Plug>(bonsai-%s)"):format(name)
    H.truthy(vim.fn.maparg(lhs, "n") ~= "", lhs .. " is mapped")
  end
  H.truthy(vim.fn.maparg("<Plug>(bonsai-send-selection)", "x") ~= "", "visual send-selection")
end)

H.test("a selection is quoted with its path and line range", function()
  local msg =
    require("bonsai.chat").quote("why?", "src/app.lua", 3, { "local x = 1", "return x" }, "lua")
  H.eq("why?\n\nsrc/app.lua:3-4\n```lua\nlocal x = 1\nreturn x\n```", msg)
end)

H.test("subcommands complete on the command line", function()
  H.eq({ "cancel", "chat", "compact", "ctx" }, vim.fn.getcompletion("Bonsai c", "cmdline"))
  H.eq({
    "attach",
    "cancel",
    "chat",
    "compact",
    "ctx",
    "episodes",
    "memory",
    "preset",
    "remember",
    "restart",
    "retry",
    "rules",
    "sessions",
    "smol",
    "tree",
  }, vim.fn.getcompletion("Bonsai ", "cmdline"))
end)

H.test("subcommand arguments complete", function()
  H.eq({ "ledger", "wire", "turns" }, vim.fn.getcompletion("Bonsai ctx ", "cmdline"))
  H.eq({ "wire" }, vim.fn.getcompletion("Bonsai ctx w", "cmdline"))
  H.eq({ "preview" }, vim.fn.getcompletion("Bonsai compact pre", "cmdline"))
  H.eq({ "deterministic" }, vim.fn.getcompletion("Bonsai compact preview d", "cmdline"))
  H.eq({ "project", "user" }, vim.fn.getcompletion("Bonsai remember ", "cmdline"))
  H.eq({}, vim.fn.getcompletion("Bonsai remember project ", "cmdline"))
  H.eq({ "on", "off", "toggle" }, vim.fn.getcompletion("Bonsai smol ", "cmdline"))
  H.eq({ "save" }, vim.fn.getcompletion("Bonsai preset s", "cmdline"))
  H.eq({ "forget" }, vim.fn.getcompletion("Bonsai memory ", "cmdline"))
  H.eq({ "add" }, vim.fn.getcompletion("Bonsai rules ", "cmdline"))
  H.eq({}, vim.fn.getcompletion("Bonsai attach ", "cmdline"), "no daemon running: nothing to offer")
end)

H.test("an unknown subcommand lists the valid ones", function()
  local seen = H.capture_notify()
  vim.cmd("Bonsai frobnicate")
  H.eq(vim.log.levels.ERROR, seen[1].level)
  H.contains(seen[1].msg, "unknown subcommand `frobnicate`; expected one of: attach, cancel, chat")
end)

H.test("bad arguments are explained", function()
  local seen = H.capture_notify()
  vim.cmd("Bonsai ctx tree")
  vim.cmd("Bonsai compact now")
  vim.cmd("Bonsai preset cheap")
  vim.cmd("Bonsai smol maybe")
  vim.cmd("Bonsai remember project")
  vim.cmd("Bonsai attach")
  local msgs = vim.tbl_map(function(n)
    return n.msg
  end, seen)
  H.contains(msgs, "unknown view `tree`: expected ledger, wire or turns")
  H.contains(msgs, "unknown compact argument `now`")
  H.contains(msgs, "unknown preset `cheap`: expected keep, balanced or save")
  H.contains(msgs, "unknown smol mode `maybe`")
  H.contains(msgs, "usage: :Bonsai remember [project|user] {fact}")
  H.contains(msgs, "usage: :Bonsai attach {session-id}")
end)

H.test("compact arguments parse into request params", function()
  local actions = require("bonsai.actions")
  H.eq(
    { preview = true, target = 4000, mode = "deterministic" },
    actions.parse_compact({ "preview", "target=4000", "deterministic" })
  )
  H.eq({ preview = false }, actions.parse_compact({}))
  local params, err = actions.parse_compact({ "target=lots" })
  H.eq(nil, params)
  H.contains(err, "unknown compact argument `target=lots`")
end)

H.test("views that need a session say how to get one", function()
  local seen = H.capture_notify()
  vim.cmd("Bonsai ctx")
  vim.cmd("Bonsai episodes")
  vim.cmd("Bonsai compact")
  H.eq(3, #seen)
  for _, n in ipairs(seen) do
    H.contains(n.msg, "no session yet: open one with :Bonsai chat")
  end
end)

H.test("a missing daemon command gives a clear error instead of a stack trace", function()
  vim.g.bonsai = { cmd = { "/nonexistent/bin/bonsai", "connect" } }
  local seen = H.capture_notify()
  vim.cmd("Bonsai chat")
  H.wait(function()
    return #seen > 0
  end, "an error message")
  H.eq(vim.log.levels.ERROR, seen[1].level)
  H.contains(seen[1].msg, "`/nonexistent/bin/bonsai` is not an executable")
  H.contains(seen[1].msg, ":checkhealth bonsai")
  H.eq(0, #vim.lsp.get_clients({ name = "bonsai" }), "no client left behind")
  vim.g.bonsai = nil
end)

H.test("a daemon command that dies at once fails pending requests with a message", function()
  vim.g.bonsai = { cmd = { "false" } }
  local seen = H.capture_notify()
  vim.cmd("Bonsai chat")
  H.wait(function()
    for _, n in ipairs(seen) do
      if n.msg:find("bonsai/session/list failed", 1, true) then
        return true
      end
    end
  end, "the request to fail")
  local msgs = table.concat(
    vim.tbl_map(function(n)
      return n.msg
    end, seen),
    "\n"
  )
  H.contains(
    msgs,
    "bonsai: bonsai/session/list failed: the daemon connection closed before the request was sent (exit 1)"
  )
  H.contains(msgs, "Run :Bonsai restart to reconnect, or :checkhealth bonsai.")
  vim.g.bonsai = nil
end)

H.test("the statusline is empty until the daemon reports a context size", function()
  H.eq("", require("bonsai").statusline())
end)

H.test("closing a bonsai window that is the last one shows another buffer", function()
  local ui = require("bonsai.ui")
  vim.cmd("only")
  vim.cmd("edit " .. vim.fn.fnameescape(vim.fn.tempname()))
  local file_buf = vim.api.nvim_get_current_buf()
  local buf = ui.scratch("bonsai://test/close", "bonsai-test")
  vim.api.nvim_set_current_buf(buf)
  ui.close()
  H.eq(file_buf, vim.api.nvim_get_current_buf())
  vim.cmd("split")
  vim.api.nvim_set_current_buf(buf)
  ui.close()
  H.eq(1, #vim.api.nvim_tabpage_list_wins(0), "a split is closed")
end)

H.test("every module loads without creating globals", function()
  local before = vim.tbl_keys(_G)
  local files = vim.fn.glob(H.plugin_dir .. "/lua/bonsai/*.lua", false, true)
  H.truthy(#files >= 15, "modules found")
  for _, file in ipairs(files) do
    local name = vim.fn.fnamemodify(file, ":t:r")
    require(name == "init" and "bonsai" or ("bonsai." .. name))
  end
  local after = vim.tbl_keys(_G)
  table.sort(before)
  table.sort(after)
  H.eq(before, after)
end)

H.run()
