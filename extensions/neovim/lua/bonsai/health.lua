---@mod bonsai.health `:checkhealth bonsai`
---
--- Checks, in order: the Neovim version, the options, that the daemon
--- command exists and answers `bonsai/daemon/status`, the provider in the
--- effective settings, and the memory embeddings model.

local M = {}

local health = vim.health

local INSTALL_ADVICE = {
  "Install bonsai into a Python environment (`pip install bonsai`) and make sure "
    .. "its `bin` directory is on $PATH.",
  "Or point the plugin at it: vim.g.bonsai = { cmd = { '/path/to/bonsai', 'connect' } }.",
}

local function check_neovim()
  health.start("bonsai: Neovim")
  local v = vim.version()
  local shown = ("%d.%d.%d"):format(v.major, v.minor, v.patch)
  if vim.fn.has("nvim-0.10") == 1 then
    health.ok("Neovim " .. shown)
  else
    health.error("Neovim " .. shown .. " is too old", { "bonsai needs Neovim 0.10 or newer." })
  end
end

---@return bonsai.Config
local function check_options()
  health.start("bonsai: options")
  local config, errors = require("bonsai.config").resolve()
  if #errors == 0 then
    health.ok("options are valid")
  end
  for _, err in ipairs(errors) do
    health.error(err .. " (the default is used)", { "See :help bonsai-config." })
  end
  return config
end

---@param status bonsai.DaemonStatusResult
local function report_status(status)
  health.ok(
    ("daemon %s is running (pid %d, up %ds, %d clients, %d sessions)"):format(
      status.version,
      status.pid,
      math.floor(status.uptimeS),
      status.clients,
      status.sessions
    )
  )
  health.info("database: " .. status.dbPath)
  local plugin_version = require("bonsai.protocol").version
  if status.version ~= plugin_version then
    health.warn(
      ("the plugin was generated for protocol %s, the daemon is %s"):format(
        plugin_version,
        status.version
      ),
      { "Update the plugin and the daemon together." }
    )
  end
end

---@param result bonsai.ConfigGetResult?
---@param err string?
local function report_provider(result, err)
  health.start("bonsai: provider")
  if not result then
    health.error("cannot read the settings: " .. tostring(err))
    return
  end
  local p = result.effective.providers or {}
  if not p.provider or p.provider == "" then
    health.error("no provider is configured", { "Set providers.provider in " .. result.path })
  else
    local where = p.base_url and (" at " .. p.base_url) or ""
    health.ok(("provider %s, model %s%s"):format(p.provider, tostring(p.model), where))
  end
  health.info("settings file: " .. result.path)
  for _, problem in ipairs(result.problems or {}) do
    health.warn(problem)
  end
end

---@param result bonsai.MemoryListResult?
---@param err string?
local function report_memory(result, err)
  health.start("bonsai: memory")
  if not result then
    health.error("cannot list memory: " .. tostring(err))
    return
  end
  local embeddings = result.embeddings or "off"
  local msg = ("%d entries; embeddings: %s"):format(#result.entries, embeddings)
  -- "on", or "off: <reason>"; off by choice (or with nothing to embed) is fine
  local by_choice = embeddings:match("no entries") or embeddings:match("disabled")
  if embeddings == "on" or by_choice then
    health.ok(msg)
  else
    health.warn(msg, {
      result.advisory
        or "Retrieval uses keyword search (BM25) only until the embeddings "
          .. "model is available (see `bonsai memory status`).",
    })
  end
  for _, issue in ipairs(result.issues or {}) do
    health.warn(issue)
  end
end

---@param request fun(method: string, params: table?): any, string?
local function check_daemon(request)
  local methods = require("bonsai.protocol").methods
  local config = require("bonsai.config")
  local status, err = request(methods.daemon_status, {})
  if not status then
    health.error("the daemon did not answer: " .. tostring(err), {
      "Run `bonsai connect` in a terminal to see why it fails.",
      "Check the daemon log under $BONSAI_HOME.",
    })
    return
  end
  report_status(status)
  local ws = config.workspace()
  report_provider(request(methods.config_get, { workspace = ws }))
  report_memory(request(methods.memory_list, { workspace = ws }))
end

function M.check()
  check_neovim()
  local config = check_options()
  health.start("bonsai: daemon")
  local exe = config.cmd[1]
  if vim.fn.executable(exe) ~= 1 then
    local located = require("bonsai.client").locate(config)
    if located then -- an error message: nothing found
      health.error(
        ("daemon command not found: `%s` is not an executable"):format(exe),
        INSTALL_ADVICE
      )
      health.info(located)
      return
    end
    exe = config.cmd[1]
    health.ok(("found bonsai without configuration: %s"):format(require("bonsai.client").found))
  else
    health.ok(("found `%s` (%s)"):format(exe, vim.fn.exepath(exe)))
  end
  local client = require("bonsai.client")
  if client.is_ready() then
    health.info("using the running bonsai client")
    check_daemon(client.request_sync)
    return
  end
  local timeout = config.request_timeout_ms
  local err = require("bonsai.probe").with_connection(
    config.cmd,
    config.cmd_env,
    timeout,
    function(request)
      check_daemon(request)
    end
  )
  if err then
    health.error(
      ("cannot reach the daemon through `%s`: %s"):format(table.concat(config.cmd, " "), err),
      {
        "Run `" .. table.concat(config.cmd, " ") .. "` in a terminal to see why it fails.",
      }
    )
  end
end

return M
