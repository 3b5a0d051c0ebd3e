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
  H.eq("bonsai wants to run edit_file(path=a.py, old=x)", q)
end)

H.test("an approval waits for the answer inside the request coroutine, showing the diff", function()
  vim.g.bonsai = { approval = { prompt = "select" } }
  local approval = require("bonsai.approval")
  approval.trace = {}
  local diff_shown, shown_in_window, trace_at_prompt
  H.answer_select(function(items)
    local b = vim.fn.bufnr("bonsai://approval/diff")
    diff_shown = b ~= -1 and vim.bo[b].filetype == "diff" and H.lines(b)
    shown_in_window = b ~= -1 and vim.fn.bufwinid(b) ~= -1
    trace_at_prompt = vim.deepcopy(approval.trace)
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
  H.truthy(shown_in_window, "the diff is in a window when the question is asked")
  H.eq({ "review", "redraw", "prompt" }, trace_at_prompt, "drawn, then asked")
  vim.g.bonsai = nil
  H.eq(-1, vim.fn.bufnr("bonsai://approval/diff"), "the diff preview is closed afterwards")
  H.eq(win, vim.api.nvim_get_current_win(), "the cursor stays where it was")
end)

H.test("the default prompt is a float answered with a; the statusline flags it meanwhile", function()
  local approval = require("bonsai.approval")
  local notes = H.capture_notify()
  local result
  local params = {
    sessionId = "s",
    turnId = "t",
    tool = "bash",
    args = { command = "make test" },
    approvalId = "a1",
    cwd = "/tmp/project",
  }
  coroutine.wrap(function()
    result = approval.handle(params)
  end)()
  local win = H.wait(function()
    for _, w in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(w).relative ~= "" then
        return w
      end
    end
  end, "the prompt float")
  H.contains(require("bonsai").statusline(), "⚑ approval waiting")
  H.contains(notes[#notes].msg, "`make test` waits for your approval")
  local review = H.lines(vim.fn.bufnr("bonsai://approval/diff"))
  H.eq({ "$ make test", "# runs in /tmp/project" }, review)
  local prompt = table.concat(H.lines(vim.api.nvim_win_get_buf(win)), "\n")
  H.contains(prompt, "bonsai wants to run `make test` in /tmp/project")
  H.eq(win, vim.api.nvim_get_current_win(), "the float has the focus")
  vim.api.nvim_feedkeys("a", "x", false)
  H.wait(function()
    return result
  end, "the answer")
  H.eq({ approved = true }, result)
  H.truthy(not vim.api.nvim_win_is_valid(win), "the float is closed")
  H.eq("", require("bonsai").statusline():match("⚑") or "", "no longer flagged")
end)

H.test("an approval answered elsewhere closes the prompt here and notes who answered", function()
  local approval = require("bonsai.approval")
  local notes = H.capture_notify()
  local result
  coroutine.wrap(function()
    result = approval.handle({
      sessionId = "s",
      turnId = "t",
      tool = "edit_file",
      args = { path = "a.py" },
      path = "a.py",
      diff = "-x\n+y",
      approvalId = "a2",
    })
  end)()
  H.wait(function()
    return approval.count() == 1 and vim.tbl_contains(approval.trace, "prompt")
  end, "the prompt")
  require("bonsai.handlers").deliver("approval_resolved", {
    sessionId = "s",
    turnId = "t",
    approvalId = "a2",
    tool = "edit_file",
    outcome = "approved",
    by = "VS Code window 3",
    yours = false,
    at = 1,
  })
  H.wait(function()
    return result
  end, "the handler to return")
  H.eq(0, approval.count())
  H.eq(-1, vim.fn.bufnr("bonsai://approval/diff"), "the diff is closed")
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    H.eq("", vim.api.nvim_win_get_config(w).relative, "no prompt float is left")
  end
  H.contains(notes[#notes].msg, "approved edit_file in VS Code window 3")
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
