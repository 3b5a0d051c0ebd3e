---@mod bonsai.approval Answer `bonsai/approval/request`
---
--- The daemon asks every attached client before an edit or a command runs;
--- the first answer wins. The request handler runs inside a coroutine (see
--- `vim.lsp.rpc`), so it can wait for |vim.ui.select()| without blocking.

local M = {}

M.APPROVE = "Approve"
M.REJECT = "Reject"

--- Wait for `vim.ui.select` inside the current coroutine (or synchronously
--- when the UI answers at once).
---@param items string[]
---@param opts table
---@return string?
local function await_select(items, opts)
  local co = coroutine.running()
  local answered, choice = false, nil
  vim.ui.select(items, opts, function(item)
    if answered then
      return
    end
    answered, choice = true, item
    if co and coroutine.status(co) == "suspended" then
      coroutine.resume(co)
    end
  end)
  if not answered then
    assert(co, "bonsai: approval prompt needs a coroutine")
    coroutine.yield()
  end
  return choice
end

--- The question shown to the user.
---@param params bonsai.ApprovalRequestParams
---@return string
function M.question(params)
  local summary = require("bonsai.chat_render").args_summary(params.args or {})
  return ("bonsai wants to run %s(%s)"):format(params.tool, summary)
end

---@param diff string?
---@return integer? bufnr of the diff preview
local function show_diff(diff)
  if not diff or diff == "" then
    return nil
  end
  local ui = require("bonsai.ui")
  local back = vim.api.nvim_get_current_win()
  local buf = ui.preview("bonsai://approval/diff", ui.lines(diff), "diff")
  vim.api.nvim_set_current_win(back) -- show the diff, keep the cursor where it was
  return buf
end

---@param buf integer?
local function close_preview(buf)
  if buf and vim.api.nvim_buf_is_valid(buf) then
    vim.api.nvim_buf_delete(buf, { force = true })
  end
end

--- Handle the server request; returns the result sent back to the daemon.
---@param params bonsai.ApprovalRequestParams
---@return bonsai.ApprovalRequestResult
function M.handle(params)
  local preview = show_diff(params.diff)
  local choice = await_select({ M.APPROVE, M.REJECT }, {
    prompt = M.question(params),
    kind = "bonsai.approval",
  })
  close_preview(preview)
  local approved = choice == M.APPROVE
  local answer = approved and "approved" or "rejected"
  require("bonsai.chat").note(params.sessionId, ("%s %s"):format(answer, params.tool))
  return { approved = approved }
end

return M
