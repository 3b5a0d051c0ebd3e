---@mod bonsai.chat_model Apply daemon events to a chat model
---
--- Pure: functions take a |bonsai.ChatModel| and an event and mutate the
--- model. Finished messages (`bonsai/session/event`) replace the streamed
--- parts they cover, so a reply is never shown twice whatever the order in
--- which the daemon's notifications arrive.

local M = {}

---@param title string
---@param tool_output_lines integer
---@return bonsai.ChatModel
function M.new(title, tool_output_lines)
  return {
    title = title,
    items = {},
    results = {},
    seen = {},
    call_ids = {},
    tool_output_lines = tool_output_lines,
  }
end

--- Index of the live turn still receiving parts (the newest live item).
---@param model bonsai.ChatModel
---@return integer?
local function live_index(model)
  for i = #model.items, 1, -1 do
    if model.items[i].live then
      return i
    end
  end
  return nil
end

---@param model bonsai.ChatModel
---@param turn_id string
---@return bonsai.LiveTurn
function M.live_turn(model, turn_id)
  for _, item in ipairs(model.items) do
    if item.live and item.live.turn_id == turn_id then
      return item.live
    end
  end
  local live = { turn_id = turn_id, parts = {}, done = false }
  table.insert(model.items, { live = live })
  return live
end

--- Drop live items that have nothing left to show.
---@param model bonsai.ChatModel
local function prune(model)
  for i = #model.items, 1, -1 do
    local live = model.items[i].live
    if live and live.done and #live.parts == 0 then
      table.remove(model.items, i)
    end
  end
end

--- Add a finished message. Returns false when it was already shown.
---@param model bonsai.ChatModel
---@param msg bonsai.WireMessage
---@return boolean changed
function M.add_message(model, msg)
  if model.seen[msg.messageId] then
    return false
  end
  model.seen[msg.messageId] = true
  if msg.role == "tool" and msg.toolCallId then
    local known = model.results[msg.toolCallId]
    local is_error = msg.status == "error" or (known ~= nil and known.is_error)
    model.results[msg.toolCallId] = { text = msg.content, is_error = is_error, final = true }
  end
  for _, call in ipairs(msg.toolCalls or {}) do
    model.call_ids[call.id] = true
  end
  local idx = live_index(model)
  if idx and msg.role ~= "user" then
    local live = model.items[idx].live --[[@as bonsai.LiveTurn]]
    if msg.role == "assistant" then
      -- the finished message carries the text and tool calls streamed so far
      live.parts = vim.tbl_filter(function(part)
        return part.kind == "error" or part.kind == "notice"
      end, live.parts)
    end
    table.insert(model.items, idx, { message = msg })
  else
    table.insert(model.items, { message = msg })
  end
  prune(model)
  return true
end

--- Replace the whole log (after attaching).
---@param model bonsai.ChatModel
---@param messages bonsai.WireMessage[]
function M.reset(model, messages)
  model.items, model.results, model.seen, model.call_ids = {}, {}, {}, {}
  for _, msg in ipairs(messages) do
    M.add_message(model, msg)
  end
end

---@alias bonsai.ChatChange "append"|"render"|"none"

---@alias bonsai.EventApplier fun(model: bonsai.ChatModel, live: bonsai.LiveTurn, ev: bonsai.ChatEventParams): bonsai.ChatChange?

--- One applier per event kind, each taking that kind's shape (see protocol.lua).
---@type table<string, bonsai.EventApplier>
local APPLY = {
  ---@param live bonsai.LiveTurn
  ---@param ev bonsai.ChatDeltaParams
  delta = function(_, live, ev)
    if live.retry then
      live.retry = nil
      table.insert(live.parts, { kind = "text", text = ev.text })
      return "render"
    end
    local last = live.parts[#live.parts]
    if last and last.kind == "text" then
      last.text = last.text .. ev.text
      return "append"
    end
    table.insert(live.parts, { kind = "text", text = ev.text })
  end,
  ---@param model bonsai.ChatModel
  ---@param live bonsai.LiveTurn
  ---@param ev bonsai.ChatToolCallParams
  toolCall = function(model, live, ev)
    if not model.call_ids[ev.toolCallId] then -- else shown in its finished message
      table.insert(
        live.parts,
        { kind = "tool", id = ev.toolCallId, name = ev.name, args = ev.args }
      )
    end
  end,
  ---@param model bonsai.ChatModel
  ---@param ev bonsai.ChatToolResultParams
  toolResult = function(model, _, ev)
    local id = ev.toolCallId
    local known = model.results[id]
    if known and known.final then -- the stored message has the full text
      known.is_error = known.is_error or ev.isError
    else
      model.results[id] = { text = ev.result, is_error = ev.isError }
    end
  end,
  ---@param live bonsai.LiveTurn
  ---@param ev bonsai.ChatErrorParams
  error = function(_, live, ev)
    table.insert(live.parts, { kind = "error", text = ev.message })
    live.done = true
  end,
  ---@param live bonsai.LiveTurn
  cancelled = function(_, live) -- not an error: the user asked (here or elsewhere)
    table.insert(live.parts, { kind = "notice", text = "cancelled" })
    live.done = true
    live.retry = nil
  end,
  ---@param live bonsai.LiveTurn
  ---@param ev bonsai.ChatNoticeParams
  notice = function(_, live, ev)
    table.insert(live.parts, { kind = "notice", text = ev.message })
  end,
  ---@param live bonsai.LiveTurn
  done = function(_, live)
    live.done = true
    live.retry = nil
  end,
  ---@param live bonsai.LiveTurn
  ---@param ev bonsai.ChatRetryParams
  retry = function(_, live, ev)
    live.retry = ev.text
  end,
  ---@param model bonsai.ChatModel
  ---@param ev bonsai.ChatUsageParams
  usage = function(model, _, ev)
    model.usage = ev.usage
    return "none"
  end,
}

--- The event kinds this plugin shows (every member of `bonsai.ChatEventParams`).
M.EVENT_KINDS = vim.tbl_keys(APPLY)
table.sort(M.EVENT_KINDS)

--- Apply one `bonsai/chat/event`. Returns "append" when only text was added
--- to the newest part (the caller may append instead of redrawing).
---@param model bonsai.ChatModel
---@param ev bonsai.ChatEventParams
---@return bonsai.ChatChange
function M.apply_event(model, ev)
  local apply = APPLY[ev.kind]
  if not apply then
    return "none" -- a kind this plugin does not know yet
  end
  local change = apply(model, M.live_turn(model, ev.turnId), ev) or "render"
  prune(model)
  return change
end

--- The running turn's events so far split into steps: a step ends where text starts
--- again after a tool call of its turn (the next model call).
---@param events bonsai.ChatEventParams[]
---@return bonsai.ChatEventParams[][]
local function turn_steps(events)
  local steps, step = {}, {}
  for _, ev in ipairs(events) do
    if ev.kind == "delta" then
      for _, seen in ipairs(step) do
        if seen.kind == "toolCall" and seen.turnId == ev.turnId then
          table.insert(steps, step)
          step = {}
          break
        end
      end
    end
    table.insert(step, ev)
  end
  table.insert(steps, step)
  return steps
end

-- what a step the stored log already holds is not shown again from
local STEP_KINDS = { delta = true, toolCall = true, toolResult = true, usage = true }

--- A window attaching mid-turn: the running turn's events the daemon sent before the
--- attach answer (`backlog`, in order), applied after the stored log (`reset`). A step
--- the log already holds (each of its tool calls stored) is not shown again; the step
--- still streaming is shown from its first word. Returns the turns still running.
---@param model bonsai.ChatModel
---@param backlog bonsai.ChatEventParams[]
---@return table<string, true> running
function M.catch_up(model, backlog)
  local running = {}
  for _, step in ipairs(turn_steps(backlog)) do
    local calls, in_log = 0, true
    for _, ev in ipairs(step) do
      if ev.kind == "toolCall" then
        calls = calls + 1
        in_log = in_log and model.call_ids[ev.toolCallId] == true
      end
    end
    in_log = in_log and calls > 0
    for _, ev in ipairs(step) do
      if ev.kind == "done" or ev.kind == "error" or ev.kind == "cancelled" then
        running[ev.turnId] = nil
      else
        running[ev.turnId] = true
      end
      if not (in_log and STEP_KINDS[ev.kind]) then
        M.apply_event(model, ev)
      end
    end
  end
  return running
end

--- Add a note (approval answers, connection loss) where the conversation is
--- now: before the reply still streaming, if any.
---@param model bonsai.ChatModel
---@param text string
function M.note(model, text)
  local idx = live_index(model)
  if idx and not model.items[idx].live.done then
    table.insert(model.items, idx, { note = text })
  else
    table.insert(model.items, { note = text })
  end
end

return M
