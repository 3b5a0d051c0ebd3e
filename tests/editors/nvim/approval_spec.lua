-- requires: sim
-- Approvals against the real daemon: a write asks through vim.ui.select with
-- the diff shown; approving writes the file, rejecting does not. The tool
-- call is a closed fold in the chat.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/helpers.lua")
H.load_plugin()
vim.g.bonsai = { approval = { prompt = "select" } }

local sid, buf

---@return string
local function text()
  return table.concat(H.lines(buf), "\n")
end

--- Answer approval prompts with `choice`, recording what the user saw.
---@param choice string
---@return {prompt: string, diff: string[]|false}[]
local function answer(choice)
  local seen = {}
  H.answer_select(function(items, opts)
    local b = vim.fn.bufnr("bonsai://approval/diff")
    local trace = require("bonsai.approval").trace
    table.insert(seen, {
      prompt = opts.prompt,
      diff = b ~= -1 and H.lines(b),
      drawn = b ~= -1 and vim.fn.bufwinid(b) ~= -1 and vim.bo[b].filetype == "diff",
      order = { trace[#trace - 2], trace[#trace - 1], trace[#trace] },
    })
    H.eq({ "Approve", "Reject" }, items)
    return choice
  end)
  return seen
end

H.test("approving a write shows its diff, writes the file and notes the answer", function()
  local seen = answer("Approve")
  vim.cmd("Bonsai chat please write notes")
  sid = H.wait(function()
    return require("bonsai").current_session()
  end, "a session", 20000)
  buf = H.wait(function()
    local b = vim.fn.bufnr("bonsai://chat/" .. sid)
    return b ~= -1 and b
  end, "the chat buffer")
  H.wait(function()
    return text():find("Written.", 1, true)
  end, "the reply after the write", 20000)
  H.eq(1, #seen, "asked once")
  H.contains(seen[1].prompt, "bonsai wants to run write_file on notes.txt")
  H.contains(seen[1].diff, "+first line")
  H.truthy(seen[1].drawn, "the diff is in a window, highlighted as a diff, when asked")
  H.eq({ "review", "redraw", "prompt" }, seen[1].order, "the review is drawn before the prompt")
  H.eq({ "first line" }, vim.fn.readfile("notes.txt"))
  H.contains(text(), "▸ write_file(path=notes.txt, content=first line⏎) ✓")
  H.contains(text(), "» approved write_file")
end)

H.test("the tool call is a closed fold in the chat window", function()
  local win = vim.fn.bufwinid(buf)
  H.truthy(win ~= -1, "the chat is shown")
  local lnum
  for i, line in ipairs(H.lines(buf)) do
    if line:find("▸ write_file", 1, true) then
      lnum = i
    end
  end
  vim.api.nvim_win_call(win, function()
    H.eq(lnum, vim.fn.foldclosed(lnum + 1), "the arguments are folded under the call line")
  end)
end)

H.test("rejecting a write leaves the file alone and the call marked failed", function()
  local seen = answer("Reject")
  require("bonsai.chat").send("please write a secret", sid)
  H.wait(function()
    return text():find("Not written then.", 1, true)
  end, "the reply after the rejection", 20000)
  H.eq(1, #seen)
  H.eq(0, vim.fn.filereadable("secret.txt"))
  H.contains(text(), "▸ write_file(path=secret.txt, content=nope⏎) ✗")
  H.contains(text(), "the user did not approve this call")
  H.contains(text(), "» rejected write_file")
end)

H.run()
