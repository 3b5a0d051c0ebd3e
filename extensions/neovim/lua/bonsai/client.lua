---@mod bonsai.client The connection to the shared daemon
---
--- One `vim.lsp` client named "bonsai" runs `bonsai connect` (a stdio bridge
--- to the user's daemon). Requests made before the LSP handshake finishes are
--- queued and sent once it has. Daemon notifications go to |bonsai.events|;
--- the approval server request goes to |bonsai.approval|.

local config = require("bonsai.config")
local events = require("bonsai.events")
require("bonsai.state") -- subscribes to ctx_changed before any notification arrives

local M = {}

M.name = "bonsai"

---@type integer?
local client_id = nil
---@class bonsai.Queued
---@field send fun()
---@field fail fun(message: string)

---@type bonsai.Queued[]
local queued = {}
---@type boolean
local stopping = false

local has_011 = vim.fn.has("nvim-0.11") == 1

--- Call a `vim.lsp.Client` method the 0.11 way (`client:m()`) or the 0.10 way.
---@param client vim.lsp.Client
---@param name string
---@return any
local function invoke(client, name, ...)
  if has_011 then
    return client[name](client, ...)
  end
  return client[name](...)
end

---@return vim.lsp.Client?
function M.get()
  if not client_id then
    return nil
  end
  local client = vim.lsp.get_client_by_id(client_id)
  if not client or invoke(client, "is_stopped") then
    client_id = nil
    return nil
  end
  return client
end

--- True when the client is running and the handshake is done.
---@return boolean
function M.is_ready()
  local client = M.get()
  return client ~= nil and client.initialized == true
end

local function flush_queue()
  local pending = queued
  queued = {}
  for _, item in ipairs(pending) do
    item.send()
  end
end

---@param code integer
---@param signal integer
local function on_exit(code, signal)
  client_id = nil
  local pending = queued
  queued = {}
  local expected = stopping
  stopping = false
  vim.schedule(function()
    for _, item in ipairs(pending) do
      item.fail(("the daemon connection closed before the request was sent (exit %d)"):format(code))
    end
    if not expected then
      vim.notify(
        ("bonsai: the daemon connection closed (exit %d, signal %d). "):format(code, signal)
          .. "Run :Bonsai restart to reconnect, or :checkhealth bonsai.",
        vim.log.levels.WARN
      )
    end
    events.emit("client_exited", { code = code, signal = signal, expected = expected })
  end)
end

---@param cfg bonsai.Config
---@return vim.lsp.ClientConfig
local function client_config(cfg)
  local root = config.workspace(cfg)
  return {
    name = M.name,
    cmd = cfg.cmd,
    cmd_env = cfg.cmd_env,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    -- the later chat event kinds this plugin shows (else the daemon sends the older shape)
    init_options = { chatEventKinds = { "cancelled" } },
    handlers = require("bonsai.handlers").build(),
    on_init = function(client)
      flush_queue()
      vim.schedule(function()
        events.emit("client_started", { clientId = client.id })
      end)
    end,
    on_exit = on_exit,
  }
end

--- How the daemon command was found, in words (for :checkhealth), once known.
---@type string?
M.found = nil

--- With the default `cmd`, find bonsai (see |bonsai.locate|) and use it; say
--- which one once. Returns an error message when there is none to run.
---@param cfg bonsai.Config
---@return string? err
function M.locate(cfg)
  if not vim.deep_equal(cfg.cmd, config.defaults.cmd) then
    return ("cannot start the daemon: `%s` is not an executable. "):format(cfg.cmd[1])
      .. "Install bonsai or set vim.g.bonsai.cmd (see :help bonsai-config, :checkhealth bonsai)."
  end
  local found, tried = require("bonsai.locate").find(config.workspace(cfg))
  if not found then
    return "cannot start the daemon: bonsai was not found (looked at "
      .. table.concat(tried, ", ")
      .. "). Install bonsai or set vim.g.bonsai.cmd (see :help bonsai-config)."
  end
  cfg.cmd = found.cmd
  if M.found ~= found.how then
    M.found = found.how
    if found.how:sub(1, 15) ~= "bonsai on $PATH" then
      vim.notify("bonsai: using " .. found.how, vim.log.levels.INFO)
    end
  end
  return nil
end

--- Start the client (or return the running one).
---@return vim.lsp.Client? client
---@return string? err a message saying what is wrong and what to do
function M.ensure()
  local running = M.get()
  if running then
    return running
  end
  local cfg = config.get()
  if vim.fn.executable(cfg.cmd[1]) ~= 1 or vim.deep_equal(cfg.cmd, config.defaults.cmd) then
    local err = M.locate(cfg)
    if err then
      return nil, err
    end
  end
  local id
  if has_011 then
    id = vim.lsp.start(client_config(cfg), { attach = false, silent = true })
  else
    id = vim.lsp.start_client(client_config(cfg))
  end
  if not id then
    return nil, ("cannot start `%s` (see :LspLog)"):format(table.concat(cfg.cmd, " "))
  end
  client_id = id
  return M.get()
end

---@param client vim.lsp.Client
---@param method string
---@param params table
---@param cb fun(err: lsp.ResponseError?, result: any)
local function send(client, method, params, cb)
  local handler = function(err, result)
    cb(err, result)
  end
  if not invoke(client, "request", method, params, handler) then
    cb({ code = -32803, message = "the daemon connection is closed" }, nil)
  end
end

--- Send a request; `cb(err, result)` runs on the main loop.
---@param method string one of `require("bonsai.protocol").methods`
---@param params table?
---@param cb fun(err: lsp.ResponseError|{message: string}|nil, result: any)
function M.request(method, params, cb)
  if params == nil or next(params) == nil then
    params = vim.empty_dict() -- `{}` would encode as a JSON array
  end
  local client, err = M.ensure()
  if not client then
    vim.schedule(function()
      cb({ message = err }, nil)
    end)
    return
  end
  if client.initialized then
    send(client, method, params, cb)
  else
    table.insert(queued, {
      send = function()
        send(client, method, params, cb)
      end,
      fail = function(message)
        cb({ message = message }, nil)
      end,
    })
  end
end

--- Like |bonsai.client.request()| but reports a failure itself and only calls
--- `on_result` on success.
---@param method string
---@param params table?
---@param on_result fun(result: any)?
function M.call(method, params, on_result)
  M.request(method, params, function(err, result)
    if err then
      vim.notify(("bonsai: %s failed: %s"):format(method, err.message), vim.log.levels.ERROR)
    elseif on_result then
      on_result(result)
    end
  end)
end

--- Blocking request (used by health checks, completion and tests).
---@param method string
---@param params table?
---@param timeout_ms integer?
---@return any result
---@return string? err
function M.request_sync(method, params, timeout_ms)
  timeout_ms = timeout_ms or config.get().request_timeout_ms
  local done, res, failure = false, nil, nil
  M.request(method, params, function(err, result)
    done, res, failure = true, result, err and err.message or nil
  end)
  if not vim.wait(timeout_ms, function()
    return done
  end, 10) then
    return nil, ("%s timed out after %d ms"):format(method, timeout_ms)
  end
  return res, failure
end

--- Stop the client. `cb` runs once it has exited.
---@param cb fun()?
function M.stop(cb)
  local client = M.get()
  if not client then
    if cb then
      vim.schedule(cb)
    end
    return
  end
  stopping = true
  local unsubscribe
  unsubscribe = events.on("client_exited", function()
    unsubscribe()
    if cb then
      cb()
    end
  end)
  invoke(client, "stop")
end

--- Stop and start again; views re-attach on `client_started`.
function M.restart()
  M.stop(function()
    local _, err = M.ensure()
    if err then
      vim.notify("bonsai: " .. err, vim.log.levels.ERROR)
    end
  end)
end

return M
