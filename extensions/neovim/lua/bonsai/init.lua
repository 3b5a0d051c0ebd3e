---@mod bonsai Neovim client of the bonsai context-managing daemon
---
--- Nothing here is required: the `:Bonsai` command works without `setup()`.
--- `setup(opts)` only merges `opts` into `vim.g.bonsai` and validates them.

local M = {}

--- Merge options into `vim.g.bonsai` and report invalid ones.
---@param opts table?
function M.setup(opts)
  opts = opts or {}
  local config = require("bonsai.config")
  local err = config.validate("setup(opts)", opts, { "table" })
  if err then
    vim.notify("bonsai: " .. err, vim.log.levels.ERROR)
    return
  end
  local current = vim.g.bonsai
  if type(current) == "function" then
    current = current()
  end
  vim.g.bonsai = vim.tbl_deep_extend("force", type(current) == "table" and current or {}, opts)
  config.get()
end

--- Statusline component: the context fill of the session in view, such as
--- `ctx 42%`, or "" when there is none. Reads cached state only (no request).
---@return string
function M.statusline()
  local state = package.loaded["bonsai.state"]
  if not state then
    return ""
  end
  local approval = package.loaded["bonsai.approval"]
  local waiting = approval and approval.count() or 0
  local flag = waiting > 0 and ("⚑ approval waiting" .. (waiting > 1 and (" (" .. waiting .. ")") or ""))
    or ""
  local sid = state.session_for_buffer()
  local ctx = sid and state.ctx[sid]
  if not ctx then
    return flag
  end
  local format = require("bonsai.config").get().statusline.format
  local fill = format:format(math.floor(ctx.percent + 0.5))
  return flag ~= "" and (flag .. " · " .. fill) or fill
end

--- Open the chat (see |:Bonsai-chat|).
---@param opts bonsai.ChatOpenOpts?
function M.chat(opts)
  require("bonsai.chat").open(opts)
end

--- Send a message to the current session.
---@param text string
function M.send(text)
  require("bonsai.chat").send(text)
end

--- Open the context ledger of the current session.
---@param view ("ledger"|"wire"|"turns")?
function M.ctx(view)
  require("bonsai.ledger").open(nil, view)
end

--- The id of the session this Neovim is working in, if any.
---@return string?
function M.current_session()
  local state = package.loaded["bonsai.state"]
  return state and state.session_for_buffer() or nil
end

return M
