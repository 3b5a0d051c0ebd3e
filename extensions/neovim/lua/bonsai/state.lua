---@mod bonsai.state Cached client-side state
---
--- What the statusline and views read without asking the daemon: the last
--- `bonsai/ctx/changed` summary per session and the session this Neovim is
--- working in. The daemon has no "current session"; this one is local.

local events = require("bonsai.events")

local M = {}

---@class bonsai.CtxSummary
---@field percent number
---@field used integer
---@field usable integer

---@type table<string, bonsai.CtxSummary>
M.ctx = {}

--- The session most recently opened or used in this Neovim.
---@type string?
M.current = nil

--- A `bonsai/session/create` is in flight (it can take seconds on a local server).
---@type boolean
M.creating = false

---@param session_id string
function M.set_current(session_id)
  M.current = session_id
end

--- The session of the current buffer (a bonsai buffer), else the current one.
---@return string?
function M.session_for_buffer()
  local ok, sid = pcall(vim.api.nvim_buf_get_var, 0, "bonsai_session")
  if ok and type(sid) == "string" then
    return sid
  end
  return M.current
end

--- The session a command acts on: the one given, else this buffer's, else the
--- current one; nil (with a warning) when there is none yet.
---@param session_id string?
---@return string?
function M.require_session(session_id)
  session_id = session_id or M.session_for_buffer()
  if not session_id and M.creating then
    vim.notify("bonsai: the session is still starting: try again in a moment", vim.log.levels.WARN)
  elseif not session_id then
    vim.notify("bonsai: no session yet: open one with :Bonsai chat", vim.log.levels.WARN)
  end
  return session_id
end

---@param params bonsai.CtxChangedParams
function M.update_ctx(params)
  M.ctx[params.sessionId] = {
    percent = params.percent,
    used = params.used,
    usable = params.usable,
  }
end

events.on("ctx_changed", function(params)
  M.update_ctx(params)
  vim.cmd("redrawstatus!")
end)
events.on("session_event", function(params)
  if params.kind == "deleted" then
    M.ctx[params.sessionId] = nil
    if M.current == params.sessionId then
      M.current = nil
    end
  end
end)

return M
