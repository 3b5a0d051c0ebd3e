-- requires: sim
-- Chat against the real daemon and the provider simulator: a sent message
-- gets a streamed reply in the buffer, shown once; a turn can be cancelled.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/helpers.lua")
H.load_plugin()

local sid, buf

---@return string
local function text()
  return table.concat(H.lines(buf), "\n")
end

--- Record the chat buffer (and its window bar) each time a delta arrives.
---@return string[] snapshots
---@return string[] bars
local function record_deltas()
  local snapshots, bars = {}, {}
  vim.api.nvim_create_autocmd("User", {
    pattern = "BonsaiChatEvent",
    callback = function(args)
      if args.data.kind == "delta" then
        table.insert(snapshots, text())
        table.insert(bars, vim.wo[vim.fn.bufwinid(buf)].winbar)
      end
      return args.data.kind == "done" -- true deletes the autocommand
    end,
  })
  return snapshots, bars
end

H.test("<CR> in the chat sends a message and the reply streams in", function()
  vim.cmd("Bonsai chat")
  sid = H.wait(function()
    return require("bonsai").current_session()
  end, "a session", 20000)
  buf = H.wait(function()
    local b = vim.fn.bufnr("bonsai://chat/" .. sid)
    return b ~= -1 and b
  end, "the chat buffer")
  local prompts = H.answer_input({ "hello bonsai" })
  local snapshots, bars = record_deltas()
  vim.api.nvim_feedkeys(vim.keycode("<CR>"), "x", false)
  H.eq({ "bonsai> " }, prompts)
  H.wait(function()
    return text():find("Hello from the simulated model, streamed word by word.", 1, true)
  end, "the full reply", 20000)
  H.truthy(#snapshots >= 2, "the reply came in several deltas, got " .. #snapshots)
  H.truthy(
    not snapshots[1]:find("Hello from the simulated model, streamed word by word.", 1, true),
    "the first delta showed part of the reply"
  )
  H.wait(function()
    return require("bonsai.chat").view(sid).running == nil
  end, "the turn to finish", 20000)
  H.eq(1, H.count(text(), "Hello from the simulated model, streamed word by word."), "shown once")
  H.contains(bars[#bars], "replying…", "the window bar while streaming")
  H.not_contains(vim.wo[vim.fn.bufwinid(buf)].winbar, "replying…")
  H.contains(
    text(),
    "## You\nhello bonsai\n\n## bonsai\nHello from the simulated model, streamed word by word."
  )
end)

H.test(":Bonsai chat {text} sends to the current session", function()
  vim.cmd("Bonsai chat what about tea")
  H.wait(function()
    return text():find("Tea is a fine idea.", 1, true)
  end, "the reply", 20000)
  H.wait(function()
    return require("bonsai.chat").view(sid).running == nil
  end, "the turn to finish", 20000)
  H.contains(text(), "## You\nwhat about tea")
end)

H.test("/clear in the chat is a hard reset, answered by the daemon, not sent", function()
  local seen = H.capture_notify()
  local turns = H.count(text(), "## You")
  H.answer_input({ "/clear" })
  vim.api.nvim_set_current_win(vim.fn.bufwinid(buf))
  vim.api.nvim_feedkeys(vim.keycode("<CR>"), "x", false)
  H.wait(function()
    return text():find("/clear: nothing to reset: episode #1 has done no real work", 1, true)
  end, "the daemon's answer in the chat", 20000)
  H.eq(turns, H.count(text(), "## You"), "no message was sent")
  H.contains(seen[#seen].msg, "nothing to reset")
end)

H.test("<Plug>(bonsai-send-selection) sends the selected lines with a question", function()
  vim.cmd("enew")
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { "alpha", "beta", "gamma" })
  vim.keymap.set("x", "S", "<Plug>(bonsai-send-selection)")
  local prompts = H.answer_input({ "explain these" })
  vim.api.nvim_feedkeys("ggjVjS", "x", false)
  H.wait(function()
    return #prompts == 1
  end, "the question prompt")
  H.wait(function()
    return text():find("Those are two lines of a list.", 1, true)
  end, "the reply", 20000)
  H.contains(text(), "## You\nexplain these\n\n")
  H.contains(text(), ":2-3\n```\nbeta\ngamma\n```")
  H.wait(function()
    return require("bonsai.chat").view(sid).running == nil
  end, "the turn to finish", 20000)
end)

H.test("<C-c> cancels a running turn", function()
  local events = {}
  vim.api.nvim_create_autocmd("User", {
    pattern = "BonsaiChatEvent",
    callback = function(args)
      table.insert(events, args.data.kind)
      return vim.tbl_contains({ "done", "error", "cancelled" }, args.data.kind)
    end,
  })
  require("bonsai.chat").send("tell me a long story", sid)
  H.wait(function()
    return vim.tbl_contains(events, "delta")
  end, "the story to start", 20000)
  vim.api.nvim_set_current_buf(buf)
  vim.api.nvim_feedkeys(vim.keycode("<C-c>"), "x", false)
  H.wait(function()
    return require("bonsai.chat").view(sid).running == nil
  end, "the turn to stop", 20000)
  H.contains(text(), "» cancelled")
  H.not_contains(text(), "error")
  H.eq("cancelled", events[#events], "a cancel of its own, not an error")
  H.not_contains(text(), "word1999")
end)

H.test("the statusline shows the context fill of the session", function()
  H.wait(function()
    return require("bonsai").statusline() ~= ""
  end, "a ctx/changed notification", 20000)
  H.truthy(require("bonsai").statusline():match("^ctx %d+%%$"), "format ctx N%")
  H.truthy(
    vim.wo[vim.fn.bufwinid(buf)].winbar:match(" · ctx %d+%%%%$"),
    "the chat's window bar too"
  )
end)

H.run()
