---@mod bonsai.client_settings Provider settings sent to the daemon
---
--- A daemon started earlier (by another Neovim, VS Code or the CLI) keeps the
--- environment it started with. So `bonsai/session/create` and
--- `bonsai/chat/send` carry this Neovim's own settings as `client`: the
--- variables `bonsai chat` reads (`BONSAI_PROVIDER`, `BONSAI_MODEL`,
--- `BONSAI_BASE_URL`, `BONSAI_FAST_MODEL` and each provider's key variable),
--- read from |vim.env| at each request, and nothing when none is set. Only
--- collected here: the daemon decides what applies and says why when a
--- setting cannot (shown with |vim.notify()|). Keys go over the daemon's 0600
--- socket and are never logged.

local client = require("bonsai.client")

local M = {}

--- The daemon's code for a configuration mistake the user must fix.
M.CONFIG_ERROR = -32010

local FIELDS = {
  { "BONSAI_PROVIDER", "provider" },
  { "BONSAI_MODEL", "model" },
  { "BONSAI_BASE_URL", "baseUrl" },
  { "BONSAI_FAST_MODEL", "fastModel" },
}

--- provider → its key variable (server/bonsai/services/providers/factory.py KEY_ENV).
local KEY_ENV = {
  { "openai", "OPENAI_API_KEY" },
  { "anthropic", "ANTHROPIC_API_KEY" },
  { "deepseek", "DEEPSEEK_API_KEY" },
  { "openai-compatible", "OPENAI_COMPATIBLE_API_KEY" },
}

---@param getenv fun(name: string): string?
---@param name string
---@return string?
local function value(getenv, name)
  local v = getenv(name)
  v = v and vim.trim(v) or ""
  return v ~= "" and v or nil
end

--- This Neovim's provider settings, or nil when none of the variables is set.
---@param getenv (fun(name: string): string?)? default: reads |vim.env|
---@return bonsai.ClientSettings?
function M.from_env(getenv)
  getenv = getenv or function(name)
    return vim.env[name]
  end
  local settings = { source = ("Neovim (pid %d)"):format(vim.fn.getpid()) }
  local names, keys = {}, {}
  for _, pair in ipairs(FIELDS) do
    local v = value(getenv, pair[1])
    if v then
      settings[pair[2]] = v
      table.insert(names, pair[1])
    end
  end
  for _, pair in ipairs(KEY_ENV) do
    local v = value(getenv, pair[2])
    if v then
      keys[pair[1]] = v
      table.insert(names, pair[2])
    end
  end
  if #names == 0 then
    return nil
  end
  settings.apiKeys = next(keys) and keys or vim.empty_dict()
  settings.names = names
  return settings
end

--- Like |bonsai.client.call()| for a request that takes `client`: adds this
--- Neovim's settings, and reports a setting the daemon cannot apply as a
--- warning in the daemon's words (they name the fix).
---@param method string
---@param params table
---@param on_result fun(result: any)?
---@param on_error fun(err: table)? also called on an error
function M.call(method, params, on_result, on_error)
  params.client = M.from_env()
  client.request(method, params, function(err, result)
    if err and on_error then
      on_error(err)
    end
    if err and err.code == M.CONFIG_ERROR then
      vim.notify("bonsai: " .. err.message, vim.log.levels.WARN)
    elseif err then
      vim.notify(("bonsai: %s failed: %s"):format(method, err.message), vim.log.levels.ERROR)
    elseif on_result then
      on_result(result)
    end
  end)
end

return M
