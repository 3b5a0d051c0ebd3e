---@mod bonsai.actions One-shot commands: compact, presets, smol, session picker

local client = require("bonsai.client")
local config = require("bonsai.config")
local protocol = require("bonsai.protocol")
local state = require("bonsai.state")
local ui = require("bonsai.ui")

local methods = protocol.methods

local M = {}

---@param msg string
---@param level integer?
local function say(msg, level)
  vim.notify("bonsai: " .. msg, level or vim.log.levels.INFO)
end

--- Parse `:Bonsai compact` arguments.
---@param args string[]
---@return table? params without sessionId
---@return string? err
function M.parse_compact(args)
  local params = { preview = false }
  for _, arg in ipairs(args) do
    local target = arg:match("^target=(%d+)$")
    if arg == "preview" then
      params.preview = true
    elseif target then
      params.target = tonumber(target)
    elseif arg == "provider" or arg == "deterministic" or arg == "fallback" then
      params.mode = arg
    else
      return nil,
        ("unknown compact argument `%s`: expected preview, target=N, provider, "):format(arg)
          .. "deterministic or fallback"
    end
  end
  return params
end

--- `:Bonsai compact [preview] [target=N] [mode]`
---@param args string[]
---@param cb fun(result: bonsai.CtxCompactResult)?
function M.compact(args, cb)
  local params, err = M.parse_compact(args)
  if not params then
    return say(err --[[@as string]], vim.log.levels.ERROR)
  end
  local sid = state.session_for_buffer()
  if not sid then
    return say("no session yet: open one with :Bonsai chat", vim.log.levels.WARN)
  end
  params.sessionId = sid
  client.call(methods.ctx_compact, params, function(result)
    local verb = result.preview and "compaction would take" or "compacted"
    say(
      ("%s the context from %s to %s tokens (%d events)"):format(
        verb,
        ui.thousands(result.before),
        ui.thousands(result.after),
        #result.events
      )
    )
    if cb then
      cb(result)
    end
  end)
end

---@param effective table
---@return string
local function profile(effective)
  local ctx = effective.context or {}
  return ("preset %s, smol %s"):format(tostring(ctx.preset), ctx.smol and "on" or "off")
end

--- `:Bonsai preset {keep|balanced|save}`
---@param name string?
function M.preset(name)
  if not vim.tbl_contains({ "keep", "balanced", "save" }, name) then
    return say(
      ("unknown preset `%s`: expected keep, balanced or save"):format(tostring(name)),
      vim.log.levels.ERROR
    )
  end
  local params = { preset = name, workspace = config.workspace() }
  client.call(methods.config_preset, params, function(result)
    say("now using " .. profile(result.effective))
  end)
end

--- `:Bonsai smol [on|off|toggle]`
---@param mode string
function M.smol(mode)
  if not vim.tbl_contains({ "on", "off", "toggle" }, mode) then
    return say(
      ("unknown smol mode `%s`: expected on, off or toggle"):format(mode),
      vim.log.levels.ERROR
    )
  end
  local ws = config.workspace()
  local function apply(on)
    client.call(methods.config_preset, { smol = on, workspace = ws }, function(result)
      say("now using " .. profile(result.effective))
    end)
  end
  if mode ~= "toggle" then
    return apply(mode == "on")
  end
  client.call(methods.config_get, { workspace = ws }, function(result)
    apply(not ((result.effective.context or {}).smol == true))
  end)
end

---@param s bonsai.SessionInfo
---@return string
function M.session_label(s)
  local title = s.title ~= "" and s.title or "untitled"
  return ("%s · %d messages · %s"):format(
    title,
    s.messageCount,
    os.date("%Y-%m-%d %H:%M", math.floor(s.updatedAt))
  )
end

--- `:Bonsai sessions`: pick a session of this workspace (or a new one).
function M.pick_session()
  client.call(methods.session_list, { workspace = config.workspace() }, function(result)
    local items = vim.list_extend({ { new = true } }, result.sessions)
    vim.ui.select(items, {
      prompt = "bonsai sessions",
      kind = "bonsai.session",
      format_item = function(item)
        return item.new and "+ new session" or M.session_label(item)
      end,
    }, function(item)
      if item then
        require("bonsai.chat").open(item.new and { new = true } or { session_id = item.sessionId })
      end
    end)
  end)
end

--- The daemon suggests a fresh session: offer to start one seeded with the
--- handoff it wrote.
---@param params bonsai.HandoffSuggestedParams
function M.handoff(params)
  if not config.get().notify_handoff then
    return
  end
  local prompt = ("bonsai: the context is %d%% full. Continue in a fresh session?"):format(
    math.floor(params.percent + 0.5)
  )
  local items = { "Start a fresh session with the handoff", "Keep going" }
  vim.ui.select(items, { prompt = prompt, kind = "bonsai.handoff" }, function(_, idx)
    if idx == 1 then
      require("bonsai.chat").open({ new = true, text = params.handoff })
    end
  end)
end

return M
