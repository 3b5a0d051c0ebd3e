---@mod bonsai.events A tiny in-process event bus
---
--- Daemon notifications are fanned out to the plugin's views through here,
--- and re-published as `User` autocommands (`BonsaiChatEvent`,
--- `BonsaiCtxChanged`, ...) so users can hook them without touching internals.

local M = {}

---@alias bonsai.EventName
---| "session_event"
---| "chat_event"
---| "ctx_changed"
---| "config_changed"
---| "memory_suggestion"
---| "handoff_suggested"
---| "rules_changed"
---| "tree_changed"
---| "reflect_offered"
---| "client_started"
---| "client_exited"

---@type table<string, table<integer, fun(params: table)>>
local subscribers = {}
local next_id = 0

--- Subscribe to an event. Returns a function that unsubscribes.
---@param name bonsai.EventName
---@param fn fun(params: table)
---@return fun()
function M.on(name, fn)
  next_id = next_id + 1
  local id = next_id
  subscribers[name] = subscribers[name] or {}
  subscribers[name][id] = fn
  return function()
    if subscribers[name] then
      subscribers[name][id] = nil
    end
  end
end

--- `chat_event` → `BonsaiChatEvent`
---@param name string
---@return string
local function autocmd_pattern(name)
  return "Bonsai"
    .. name:gsub("^%l", string.upper):gsub("_(%l)", function(c)
      return c:upper()
    end)
end

--- Deliver an event to every subscriber (in subscription order), then to
--- `User` autocommands. A failing subscriber is reported, not fatal.
---@param name bonsai.EventName
---@param params table
function M.emit(name, params)
  local subs = subscribers[name] or {}
  local ids = vim.tbl_keys(subs)
  table.sort(ids)
  for _, id in ipairs(ids) do
    local fn = subs[id]
    if fn then
      local ok, err = pcall(fn, params)
      if not ok then
        vim.notify(("bonsai: %s handler failed: %s"):format(name, err), vim.log.levels.ERROR)
      end
    end
  end
  local ok, err = pcall(vim.api.nvim_exec_autocmds, "User", {
    pattern = autocmd_pattern(name),
    modeline = false,
    data = params,
  })
  if not ok then
    vim.notify(
      ("bonsai: a User %s autocommand failed: %s"):format(autocmd_pattern(name), err),
      vim.log.levels.ERROR
    )
  end
end

return M
