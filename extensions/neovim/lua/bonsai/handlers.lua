---@mod bonsai.handlers What the plugin does with each message from the daemon
---
--- Every notification is published on |bonsai.events| (open views listen
--- there). A few also need an answer from the user whether or not a view is
--- open: memory suggestions, handoff suggestions and settings problems. The
--- approval server request is answered by |bonsai.approval|.

local events = require("bonsai.events")
local protocol = require("bonsai.protocol")

local M = {}

---@type table<string, fun(params: table)>
M.hooks = {
  memory_suggestion = function(params)
    require("bonsai.memory").suggest(params)
  end,
  rules_changed = function(params)
    require("bonsai.rules").changed(params)
  end,
  handoff_suggested = function(params)
    require("bonsai.actions").handoff(params)
  end,
  reflect_offered = function(params)
    require("bonsai.reflect").offered(params)
  end,
  approval_resolved = function(params)
    require("bonsai.approval").resolved(params)
  end,
  chat_event = function(params)
    require("bonsai.reload").chat_event(params)
  end,
  config_changed = function(params)
    for _, problem in ipairs(params.problems or {}) do
      vim.notify("bonsai: settings problem: " .. problem, vim.log.levels.WARN)
    end
  end,
}

--- Deliver one notification.
---@param key string key of `protocol.notifications`, e.g. "chat_event"
---@param params table
function M.deliver(key, params)
  events.emit(key, params)
  local hook = M.hooks[key]
  if hook then
    hook(params)
  end
end

--- The `handlers` table of the client config.
---@return table<string, lsp.Handler>
function M.build()
  local out = {}
  for key, method in pairs(protocol.notifications) do
    out[method] = function(_, params)
      M.deliver(key, params or {})
    end
  end
  out[protocol.server_requests.approval_request] = function(_, params)
    return require("bonsai.approval").handle(params)
  end
  return out
end

return M
