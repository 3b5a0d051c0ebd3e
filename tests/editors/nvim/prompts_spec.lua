-- How daemon notifications and requests reach the user: approval prompts
-- (with the diff), memory and handoff suggestions, settings problems, User
-- autocommands and the statusline's cached context fill.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/helpers.lua")
H.load_plugin()

H.test("the statusline reads the cached ctx/changed summary", function()
  local state = require("bonsai.state")
  require("bonsai.events").emit(
    "ctx_changed",
    { sessionId = "s7", percent = 41.6, used = 100, usable = 240 }
  )
  state.set_current("s7")
  H.eq("ctx 42%", require("bonsai").statusline())
  vim.g.bonsai = { statusline = { format = "🌳 %d%%" } }
  H.eq("🌳 42%", require("bonsai").statusline())
  vim.g.bonsai = nil
end)

H.test("the approval question summarises the tool call", function()
  local q = require("bonsai.approval").question({
    sessionId = "s",
    turnId = "t",
    tool = "edit_file",
    args = { path = "a.py", old = "x" },
  })
  H.eq("bonsai wants to run edit_file(old=x, path=a.py)", q)
end)

H.test("an approval waits for the answer inside the request coroutine, showing the diff", function()
  local diff_shown
  H.answer_select(function(items)
    local b = vim.fn.bufnr("bonsai://approval/diff")
    diff_shown = b ~= -1 and vim.bo[b].filetype == "diff" and H.lines(b)
    return items[1]
  end)
  local result
  local win = vim.api.nvim_get_current_win()
  local params = {
    sessionId = "s",
    turnId = "t",
    tool = "edit_file",
    args = { path = "a.py" },
    diff = "-old\n+new",
  }
  coroutine.wrap(function()
    result = require("bonsai.approval").handle(params)
  end)()
  H.eq(nil, result, "still waiting for the user")
  H.wait(function()
    return result
  end, "the answer")
  H.eq({ approved = true }, result)
  H.eq({ "-old", "+new" }, diff_shown)
  H.eq(-1, vim.fn.bufnr("bonsai://approval/diff"), "the diff preview is closed afterwards")
  H.eq(win, vim.api.nvim_get_current_win(), "the cursor stays where it was")
end)

H.test("a memory suggestion asks which facts to remember", function()
  local asked = H.answer_select(function(items)
    return items[#items]
  end)
  require("bonsai.handlers").deliver(
    "memory_suggestion",
    { sessionId = "s1", facts = { "uses tox", "prefers tabs" } }
  )
  H.eq(1, #asked)
  H.eq(
    { "Remember all 2", "Remember: uses tox", "Remember: prefers tabs", "Dismiss" },
    asked[1].items
  )
  H.contains(asked[1].opts.prompt, "Remember them?")
end)

H.test("a handoff suggestion offers a fresh session, unless turned off", function()
  local asked = H.answer_select(function(items)
    return items[2]
  end)
  local params = { sessionId = "s1", percent = 91.2, handoff = "Goal: ship it" }
  require("bonsai.handlers").deliver("handoff_suggested", params)
  H.eq(1, #asked)
  H.eq("bonsai: the context is 91% full. Continue in a fresh session?", asked[1].opts.prompt)
  vim.g.bonsai = { notify_handoff = false }
  require("bonsai.handlers").deliver("handoff_suggested", params)
  H.eq(1, #asked, "not asked again")
  vim.g.bonsai = nil
end)

H.test("settings problems reported by the daemon are shown", function()
  local seen = H.capture_notify()
  require("bonsai.handlers").deliver(
    "config_changed",
    { problems = { "context.gc_trigger: must be < 1" } }
  )
  H.eq("bonsai: settings problem: context.gc_trigger: must be < 1", seen[1].msg)
end)

H.test("notifications become User autocommands with their params", function()
  local got
  vim.api.nvim_create_autocmd("User", {
    pattern = "BonsaiCtxChanged",
    once = true,
    callback = function(args)
      got = args.data
    end,
  })
  require("bonsai.handlers").deliver(
    "ctx_changed",
    { sessionId = "s2", percent = 10, used = 1, usable = 10 }
  )
  H.eq({ sessionId = "s2", percent = 10, used = 1, usable = 10 }, got)
end)

H.run()
