---@mod bonsai.chat_window How a chat buffer is drawn in its windows
---
--- Full redraws, appending streamed text to the last line, tool-call folds
--- (a `foldexpr` fed by the renderer), following new output and the window
--- bar (title, "replying…", context fill).

local render = require("bonsai.chat_render")
local state = require("bonsai.state")
local ui = require("bonsai.ui")

local M = {}

---@type table<integer, table<integer, string>> fold levels by buffer, then line
local levels = {}

--- `foldexpr` of chat windows: tool calls are folds.
---@param lnum integer
---@return string
function M.foldexpr(lnum)
  local by_line = levels[vim.api.nvim_get_current_buf()]
  return by_line and by_line[lnum] or "0"
end

---@param win integer
function M.set_options(win)
  local wo = vim.wo[win][0]
  wo.foldmethod = "expr"
  wo.foldexpr = "v:lua.require'bonsai.chat_window'.foldexpr(v:lnum)"
  wo.foldlevel = 0
  wo.foldenable = true
  wo.foldtext = ""
  -- Side splits opened later (the ledger, lists) take their room from other
  -- windows, never from the chat.
  wo.winfixwidth = true
end

--- Windows showing `buf` whose cursor is on the last line follow new output.
---@param buf integer
---@return integer[]
local function following_windows(buf)
  local last = vim.api.nvim_buf_line_count(buf)
  return vim.tbl_filter(function(win)
    return vim.api.nvim_win_get_cursor(win)[1] >= last
  end, vim.fn.win_findbuf(buf))
end

---@param buf integer
---@param wins integer[]
function M.follow(buf, wins)
  local last = vim.api.nvim_buf_line_count(buf)
  for _, win in ipairs(wins) do
    vim.api.nvim_win_set_cursor(win, { last, 0 })
  end
end

--- The window bar of a chat: title, whether a reply is coming, context fill.
---@param view bonsai.ChatView
---@return string a 'winbar' value ("%" escaped)
function M.winbar(view)
  local parts = { "bonsai · " .. (view.model.title ~= "" and view.model.title or "untitled") }
  if view.running then
    table.insert(parts, "replying…")
  end
  local ctx = state.ctx[view.session_id]
  if ctx then
    table.insert(parts, ("ctx %d%%"):format(math.floor(ctx.percent + 0.5)))
  end
  return (" " .. table.concat(parts, " · ")):gsub("%%", "%%%%")
end

---@param view bonsai.ChatView
function M.update_winbar(view)
  local bar = M.winbar(view)
  for _, win in ipairs(vim.fn.win_findbuf(view.buf)) do
    vim.wo[win].winbar = bar
  end
end

--- Render the whole model into the buffer.
---@param view bonsai.ChatView
function M.redraw(view)
  if not vim.api.nvim_buf_is_valid(view.buf) then
    return
  end
  local wins = following_windows(view.buf)
  local out = render.render(view.model)
  levels[view.buf] = render.fold_levels(out.folds)
  view.tail_is_text = out.tail_is_text
  ui.set_lines(view.buf, out.lines)
  M.follow(view.buf, wins)
  M.update_winbar(view)
end

--- Append streamed text to the last line without redrawing the buffer.
---@param view bonsai.ChatView
---@param text string
function M.append_text(view, text)
  local buf = view.buf
  local wins = following_windows(buf)
  local pieces = vim.split(text:gsub("\r", ""), "\n", { plain = true })
  local last = vim.api.nvim_buf_line_count(buf)
  pieces[1] = vim.api.nvim_buf_get_lines(buf, last - 1, last, false)[1] .. pieces[1]
  ui.edit(buf, function()
    vim.api.nvim_buf_set_lines(buf, last - 1, last, false, pieces)
  end)
  M.follow(buf, wins)
end

--- Forget a wiped buffer.
---@param buf integer
function M.forget(buf)
  levels[buf] = nil
end

return M
