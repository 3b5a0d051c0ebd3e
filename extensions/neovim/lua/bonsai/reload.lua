---@mod bonsai.reload Buffers follow the agent
---
--- After a tool that can change files (an edit, a write, a command) ran, every
--- loaded file buffer (shown or hidden) is checked against the disk with
--- `:checktime`, so an unmodified buffer shows the agent's change at once
--- ('autoread') and a modified one warns before it could overwrite it.

local M = {}

--- Tools whose success may have changed files on disk.
M.CHANGES_FILES = { edit_file = true, write_file = true, bash = true }

--- Check every loaded, named, normal buffer against its file.
---@return integer checked how many buffers were checked
function M.checktime()
  local checked = 0
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(buf)
    if
      vim.api.nvim_buf_is_loaded(buf)
      and vim.bo[buf].buftype == ""
      and name ~= ""
      and not name:match("^%a+://")
    then
      pcall(vim.cmd.checktime, buf)
      checked = checked + 1
    end
  end
  return checked
end

--- `bonsai/chat/event`: after a successful file-changing tool, check buffers.
---@param params bonsai.ChatEventParams
function M.chat_event(params)
  if params.kind == "toolResult" and not params.isError and M.CHANGES_FILES[params.name or ""] then
    vim.schedule(M.checktime)
  end
end

return M
