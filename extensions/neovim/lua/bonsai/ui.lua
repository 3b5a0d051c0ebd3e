---@mod bonsai.ui Scratch buffers, splits and small helpers shared by the views

local M = {}

M.ns = vim.api.nvim_create_namespace("bonsai")

--- Find a buffer by name, or create a scratch buffer with that name.
---@param name string e.g. "bonsai://chat/<id>"
---@param filetype string
---@return integer bufnr
---@return boolean created
function M.scratch(name, filetype)
  local existing = vim.fn.bufnr(name)
  if existing ~= -1 and vim.api.nvim_buf_is_valid(existing) then
    return existing, false
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, name)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = filetype
  return buf, true
end

--- Is there room for a `size`-column side split without shrinking the windows
--- that keep their width (the chat)? Other windows keep at least 20 columns.
---@param size integer
---@return boolean
function M.room_beside_fixed(size)
  local fixed = 0
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_config(win).relative == "" and vim.wo[win].winfixwidth then
      fixed = fixed + vim.api.nvim_win_get_width(win) + 1
    end
  end
  return fixed == 0 or vim.o.columns - fixed >= size + 20
end

--- Show `buf` in a window: reuse one already showing it, else open a split.
---@param buf integer
---@param split bonsai.SplitKind "float" is a centred window over the others
---@param size integer
---@return integer winid
function M.show(buf, split, size)
  local win = vim.fn.bufwinid(buf)
  if win ~= -1 then
    vim.api.nvim_set_current_win(win)
    return win
  end
  if split == "vertical" and not M.room_beside_fixed(size) then
    split = "float" -- a side split here would squeeze the chat: float over it instead
  end
  if split == "float" then
    local width = math.max(40, math.floor(vim.o.columns * 0.8))
    local height = math.max(8, math.floor((vim.o.lines - 2) * 0.7))
    width, height = math.min(width, vim.o.columns - 2), math.min(height, vim.o.lines - 4)
    win = vim.api.nvim_open_win(buf, true, {
      relative = "editor",
      width = width,
      height = height,
      row = math.floor((vim.o.lines - height) / 2) - 1,
      col = math.floor((vim.o.columns - width) / 2),
      border = "rounded",
      style = "minimal",
    })
    vim.wo[win][0].wrap = true
    return win
  end
  if split == "tab" then
    vim.cmd("tab split")
  elseif split == "vertical" then
    vim.cmd(("botright vertical %dsplit"):format(size))
  elseif split == "horizontal" then
    vim.cmd(("botright %dsplit"):format(size))
  end
  win = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(win, buf)
  vim.wo[win][0].number = false
  vim.wo[win][0].relativenumber = false
  vim.wo[win][0].signcolumn = "no"
  vim.wo[win][0].wrap = true
  vim.wo[win][0].linebreak = true
  return win
end

--- Close the current window; in the last window, show another buffer instead
--- (`:close` refuses to close the last window).
function M.close()
  if #vim.api.nvim_tabpage_list_wins(0) > 1 then
    vim.cmd("close")
  elseif vim.fn.bufnr("#") > 0 and vim.fn.buflisted(vim.fn.bufnr("#")) == 1 then
    vim.cmd("buffer #")
  else
    vim.cmd("enew")
  end
end

--- Replace all lines of a non-modifiable scratch buffer.
---@param buf integer
---@param lines string[]
function M.set_lines(buf, lines)
  M.edit(buf, function()
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  end)
end

--- Run `fn` with `buf` temporarily modifiable.
---@param buf integer
---@param fn fun()
function M.edit(buf, fn)
  vim.bo[buf].modifiable = true
  local ok, err = pcall(fn)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  if not ok then
    error(err, 0)
  end
end

--- Buffer-local normal-mode mappings from a `keys` table (`false` skips one).
---@param buf integer
---@param keys table<string, string|false>
---@param actions table<string, {[1]: fun(), [2]: string}> action → {fn, description}
function M.map_keys(buf, keys, actions)
  for action, spec in pairs(actions) do
    local lhs = keys[action]
    if lhs then
      vim.keymap.set(
        "n",
        lhs,
        spec[1],
        { buffer = buf, nowait = true, desc = "bonsai: " .. spec[2] }
      )
    end
  end
end

--- Split text into buffer lines (a buffer line cannot hold "\n").
---@param text string?
---@return string[]
function M.lines(text)
  if text == nil or text == "" then
    return {}
  end
  return vim.split(text:gsub("\r\n", "\n"), "\n", { plain = true })
end

--- A fill bar such as `[██████░░░░]`.
---@param percent number 0..100
---@param width integer
---@return string
function M.bar(percent, width)
  local filled = math.floor(math.max(0, math.min(100, percent)) / 100 * width + 0.5)
  return "[" .. string.rep("█", filled) .. string.rep("░", width - filled) .. "]"
end

--- Pad to a display width (multi-byte characters count as what they show).
---@param text string
---@param width integer
---@param right boolean? align right
---@return string
function M.pad(text, width, right)
  local fill = string.rep(" ", math.max(0, width - vim.fn.strdisplaywidth(text)))
  return right and (fill .. text) or (text .. fill)
end

--- `12345` → `12,345`
---@param n number
---@return string
function M.thousands(n)
  local s = tostring(math.floor(n))
  local sign, digits = s:match("^(-?)(%d+)$")
  return sign .. digits:reverse():gsub("(%d%d%d)", "%1,"):reverse():gsub("^,", "")
end

--- Show `lines` in a read-only scratch buffer below the current window.
---@param name string
---@param lines string[]
---@param filetype string?
---@return integer bufnr
function M.preview(name, lines, filetype)
  local buf = M.scratch(name, filetype or "markdown")
  vim.bo[buf].bufhidden = "wipe"
  M.set_lines(buf, lines)
  M.show(buf, "horizontal", math.max(5, math.min(20, #lines)))
  vim.keymap.set("n", "q", M.close, { buffer = buf, nowait = true, desc = "bonsai: close" })
  return buf
end

return M
