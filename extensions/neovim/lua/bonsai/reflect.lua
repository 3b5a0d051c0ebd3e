---@mod bonsai.reflect Retry offers after a failed turn (autoReflect)
---
--- The daemon grades a failed turn and offers a retry as a sibling branch
--- with a reflection attached. The offer is shown with |vim.notify|;
--- `:Bonsai retry` takes the latest offer, `:Bonsai retry dismiss` drops it.

local client = require("bonsai.client")
local protocol = require("bonsai.protocol")

local M = {}

---@type table? the latest offer not yet taken or dismissed
M.pending = nil

---@param params table bonsai.ReflectOfferedParams
function M.offered(params)
  if params.autoRetry then
    vim.notify("bonsai: the last turn failed; retrying with a reflection", vim.log.levels.INFO)
    return
  end
  M.pending = params
  local grade = params.grade
  local last = grade.evidence[#grade.evidence] or ""
  vim.notify(
    ("bonsai: the last turn failed (%s, %s): %s\n:Bonsai retry to retry with a reflection · :Bonsai retry dismiss"):format(
      grade.kind,
      grade.severity,
      last
    ),
    vim.log.levels.WARN
  )
end

--- Take (or with `dismiss`, drop) the latest offer.
---@param dismiss boolean?
function M.retry(dismiss)
  local offer = M.pending
  if offer == nil then
    vim.notify("bonsai: no retry offer", vim.log.levels.WARN)
    return
  end
  M.pending = nil
  local params = { sessionId = offer.sessionId, offerId = offer.offerId }
  local method = dismiss and protocol.methods.reflect_dismiss or protocol.methods.reflect_retry
  client.call(method, params, function() end)
end

return M
