---@mod bonsai.probe A short-lived daemon connection for health checks
---
--- Starts `cmd` (normally `bonsai connect`) with |vim.lsp.rpc.start()|, does
--- the LSP handshake, runs a few requests synchronously and closes. Used by
--- `:checkhealth bonsai` when the plugin's own client is not running, so the
--- check never leaves a client behind.

local M = {}

---@class bonsai.ProbeConnection
---@field request fun(method: string, params: table?): any, string?

---@param rpc vim.lsp.rpc.PublicClient
---@param timeout_ms integer
---@param exited fun(): string?
---@return fun(method: string, params: table?): any, string?
local function sync_requester(rpc, timeout_ms, exited)
  return function(method, params)
    local done, res, failure = false, nil, nil
    if params == nil or next(params) == nil then
      params = vim.empty_dict() -- `{}` would encode as a JSON array
    end
    local ok = rpc.request(method, params, function(err, result)
      done, res = true, result
      failure = err and (err.message or vim.inspect(err)) or nil
    end)
    if not ok then
      return nil, "the connection is closed"
    end
    local finished = vim.wait(timeout_ms, function()
      return done or exited() ~= nil
    end, 10)
    if done then
      return res, failure
    end
    if finished then
      return nil, exited()
    end
    return nil, ("no answer to %s within %d ms"):format(method, timeout_ms)
  end
end

--- Start `cmd` as an RPC peer. Returns it and a function telling why it
--- exited (nil while it runs).
---@param cmd string[]
---@param env table<string, string>
---@return vim.lsp.rpc.PublicClient? rpc
---@return (fun(): string?)|string exited, or the error that prevented the start
local function start(cmd, env)
  local exit_msg, rpc_errors = nil, {}
  local shown = table.concat(cmd, " ")
  local ok, rpc = pcall(vim.lsp.rpc.start, cmd, {
    on_exit = function(code, signal)
      local detail = table.concat(rpc_errors, "; ")
      exit_msg = ("`%s` exited (code %d, signal %d)%s"):format(
        shown,
        code,
        signal,
        detail ~= "" and (": " .. detail:sub(-300)) or ""
      )
    end,
    on_error = function(code, err)
      table.insert(rpc_errors, ("rpc error %s: %s"):format(code, vim.inspect(err)))
    end,
  }, { env = env })
  if not ok then
    return nil, ("cannot start `%s`: %s"):format(shown, rpc)
  end
  return rpc, function()
    return exit_msg
  end
end

--- Connect, run `fn(request)`, disconnect.
---@param cmd string[]
---@param env table<string, string>
---@param timeout_ms integer
---@param fn fun(request: fun(method: string, params: table?): any, string?)
---@return string? err why the connection could not be made
function M.with_connection(cmd, env, timeout_ms, fn)
  local rpc, exited = start(cmd, env)
  if not rpc then
    return exited --[[@as string]]
  end
  local request = sync_requester(rpc, timeout_ms, exited --[[@as fun(): string?]])
  local _, err = request("initialize", {
    processId = vim.fn.getpid(),
    rootUri = vim.NIL,
    capabilities = vim.empty_dict(),
    clientInfo = { name = "bonsai.nvim-health" },
  })
  if err then
    rpc.terminate()
    return err
  end
  rpc.notify("initialized", vim.empty_dict())
  local run_ok, run_err = pcall(fn, request)
  -- closing the bridge ends this connection only; the shared daemon stays up
  rpc.terminate()
  if not run_ok then
    error(run_err, 0)
  end
  return nil
end

return M
