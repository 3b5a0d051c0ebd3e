---@mod bonsai.chat_render Turn a chat model into buffer lines and folds
---
--- Pure: no buffers, no requests. A model is an ordered list of finished
--- messages and live (streaming) turns; rendering returns the lines, the line
--- ranges to fold (tool calls) and whether the buffer ends in streaming text,
--- in which case later deltas can be appended without a full redraw.

local M = {}

---@class bonsai.ToolResult
---@field text string
---@field is_error boolean
---@field final boolean? from the stored tool message (not the truncated event)

---@class bonsai.LivePart
---@field kind "text"|"tool"|"error"|"notice"
---@field text string?
---@field id string? tool call id
---@field name string? tool name
---@field args any? tool arguments

---@class bonsai.LiveTurn
---@field turn_id string
---@field parts bonsai.LivePart[]
---@field done boolean
---@field retry string? "retrying in N s (…)" while the provider backs off

---@class bonsai.ChatItem
---@field message bonsai.WireMessage?
---@field live bonsai.LiveTurn?
---@field note string? a line from the plugin (approval answers, lost connection)

---@class bonsai.ChatModel
---@field title string
---@field items bonsai.ChatItem[]
---@field results table<string, bonsai.ToolResult> tool results by tool call id
---@field tool_output_lines integer
---@field seen table<string, true> message ids already in `items`
---@field call_ids table<string, true> tool call ids of finished assistant messages
---@field usage bonsai.UsageInfo? usage of the latest model call

---@class bonsai.RenderContext
---@field results table<string, bonsai.ToolResult>
---@field called table<string, true> ids of tool calls made by finished messages
---@field max_lines integer
---@field speaker string? header of the block being rendered

---@class bonsai.Rendered
---@field lines string[]
---@field folds {[1]: integer, [2]: integer}[] 1-based inclusive line ranges
---@field tail_is_text boolean the last line belongs to a streaming text part

M.USER = "## You"
M.ASSISTANT = "## bonsai"

---@param text string?
---@return string[]
local function split(text)
  if text == nil or text == "" then
    return {}
  end
  return vim.split(text:gsub("\r", ""), "\n", { plain = true })
end

---@param args any
---@return any decoded arguments (a table when they are a JSON object)
local function decode_args(args)
  if type(args) == "string" then
    local ok, decoded = pcall(vim.json.decode, args)
    if ok and type(decoded) == "table" then
      return decoded
    end
  end
  return args
end

--- Arguments that say what a call is about, shown first in its summary.
local MEANINGFUL = { path = 1, command = 2, pattern = 3, query = 4, url = 5, name = 6 }

--- One-line summary of tool arguments, e.g. `path=src/x.py, line=3`: the
--- meaningful ones (path, command, pattern…) first, the others by name.
---@param args any
---@return string
function M.args_summary(args)
  args = decode_args(args)
  local out
  if type(args) == "table" and not vim.islist(args) then
    local keys = vim.tbl_keys(args)
    table.sort(keys, function(a, b)
      local ra, rb = MEANINGFUL[a] or math.huge, MEANINGFUL[b] or math.huge
      if ra ~= rb then
        return ra < rb
      end
      return a < b
    end)
    local parts = {}
    for _, k in ipairs(keys) do
      local v = args[k]
      local shown = type(v) == "string" and v or vim.json.encode(v)
      table.insert(parts, k .. "=" .. shown:gsub("\n", "⏎"))
    end
    out = table.concat(parts, ", ")
  else
    out = type(args) == "string" and args or vim.json.encode(args)
  end
  if vim.fn.strchars(out) > 72 then
    out = vim.fn.strcharpart(out, 0, 71) .. "…"
  end
  return out
end

--- Tool arguments as readable lines: `key: value`, multi-line values indented.
---@param args any
---@param indent string
---@return string[]
function M.args_lines(args, indent)
  args = decode_args(args)
  if type(args) ~= "table" or vim.islist(args) then
    local text = type(args) == "string" and args or vim.json.encode(args)
    return vim.tbl_map(function(line)
      return indent .. line
    end, split(text))
  end
  local keys = vim.tbl_keys(args)
  table.sort(keys)
  local out = {}
  for _, key in ipairs(keys) do
    local value = args[key]
    local text = type(value) == "string" and value:gsub("\n$", "") or vim.json.encode(value)
    local lines = split(text)
    if #lines <= 1 then
      table.insert(out, ("%s%s: %s"):format(indent, key, lines[1] or ""))
    else
      table.insert(out, ("%s%s: |"):format(indent, key))
      for _, line in ipairs(lines) do
        table.insert(out, indent .. "  " .. line)
      end
    end
  end
  return out
end

---@param result bonsai.ToolResult?
---@return string
local function status_mark(result)
  if not result then
    return "…"
  end
  return result.is_error and "✗" or "✓"
end

---@param out string[]
---@param folds table
---@param call {id: string?, name: string, args: any}
---@param result bonsai.ToolResult?
---@param max_lines integer
local function render_tool(out, folds, call, result, max_lines)
  local first = #out + 1
  table.insert(
    out,
    ("▸ %s(%s) %s"):format(call.name, M.args_summary(call.args), status_mark(result))
  )
  table.insert(out, "  args:")
  vim.list_extend(out, M.args_lines(call.args, "    "))
  if result then
    table.insert(out, result.is_error and "  error:" or "  result:")
    local lines = split(result.text)
    for i = 1, math.min(#lines, max_lines) do
      table.insert(out, "    " .. lines[i])
    end
    if #lines > max_lines then
      table.insert(out, ("    … %d more lines"):format(#lines - max_lines))
    end
  end
  table.insert(folds, { first, #out })
end

--- A speaker header, unless the same speaker goes on (the steps of one reply
--- read as one block).
---@param out string[]
---@param ctx bonsai.RenderContext
---@param header string
local function speaker(out, ctx, header)
  if ctx.speaker ~= header or header == M.USER then
    table.insert(out, header)
  end
  ctx.speaker = header
end

---@param out string[]
---@param folds table
---@param msg bonsai.WireMessage
---@param ctx bonsai.RenderContext
--- Background data the daemon added to a turn: one folded "recalled" chip.
---@param out string[]
---@param folds table
---@param note bonsai.RecalledNote
function M.render_recalled(out, folds, note)
  local first = #out + 1
  local what = #note.titles > 0 and table.concat(note.titles, ", ") or "background data"
  local sources = table.concat(note.sources or {}, ", ")
  table.insert(out, ("▸ recalled: %s (%s)"):format(what, sources))
  for _, line in ipairs(split(note.text)) do
    table.insert(out, "    " .. line)
  end
  if #out > first then
    table.insert(folds, { first, #out })
  end
end

local function render_message(out, folds, msg, ctx)
  if msg.role == "user" and msg.recalled then
    M.render_recalled(out, folds, msg.recalled)
  elseif msg.role == "user" then
    speaker(out, ctx, M.USER)
    vim.list_extend(out, split(msg.content))
  elseif msg.role == "assistant" then
    speaker(out, ctx, M.ASSISTANT)
    vim.list_extend(out, split(msg.content))
    for _, call in ipairs(msg.toolCalls or {}) do
      local spec = { id = call.id, name = call.name, args = call.arguments }
      render_tool(out, folds, spec, ctx.results[call.id], ctx.max_lines)
    end
  elseif msg.role == "tool" then
    if msg.toolCallId and ctx.called[msg.toolCallId] then
      return -- shown inside the fold of the call that asked for it
    end
    local spec = { name = msg.name or "tool", args = "" }
    render_tool(out, folds, spec, { text = msg.content, is_error = false }, ctx.max_lines)
  else
    speaker(out, ctx, "## " .. msg.role)
    vim.list_extend(out, split(msg.content))
  end
  if msg.status == "interrupted" or msg.status == "error" then
    table.insert(out, ("(%s)"):format(msg.status))
  end
  table.insert(out, "")
end

---@param out string[]
---@param folds table
---@param live bonsai.LiveTurn
---@param ctx bonsai.RenderContext
---@return boolean tail_is_text
local function render_live(out, folds, live, ctx)
  if #live.parts == 0 and not live.retry then
    return false
  end
  speaker(out, ctx, M.ASSISTANT)
  local tail_text = false
  for _, part in ipairs(live.parts) do
    tail_text = false
    if part.kind == "text" then
      local lines = split(part.text)
      vim.list_extend(out, #lines > 0 and lines or { "" })
      tail_text = true
    elseif part.kind == "tool" then
      local spec = { id = part.id, name = part.name or "tool", args = part.args }
      render_tool(out, folds, spec, ctx.results[part.id or ""], ctx.max_lines)
    elseif part.kind == "error" then
      table.insert(out, "» error: " .. (part.text or "unknown error"))
    else
      table.insert(out, "» " .. (part.text or ""))
    end
  end
  if live.retry and not live.done then
    table.insert(out, "» " .. live.retry)
    return false
  end
  if live.done then
    table.insert(out, "")
    return false
  end
  return tail_text
end

--- Render the whole model.
---@param model bonsai.ChatModel
---@return bonsai.Rendered
function M.render(model)
  local out = { "# bonsai · " .. (model.title ~= "" and model.title or "untitled"), "" }
  local folds = {}
  local tail_is_text = false
  ---@type bonsai.RenderContext
  local ctx = { results = model.results, called = {}, max_lines = model.tool_output_lines }
  for _, item in ipairs(model.items) do
    for _, call in ipairs(item.message and item.message.toolCalls or {}) do
      ctx.called[call.id] = true
    end
  end
  for _, item in ipairs(model.items) do
    tail_is_text = false
    if item.message then
      render_message(out, folds, item.message, ctx)
    elseif item.note then
      vim.list_extend(out, { "» " .. item.note, "" })
    elseif item.live then
      tail_is_text = render_live(out, folds, item.live, ctx)
    end
  end
  return { lines = out, folds = folds, tail_is_text = tail_is_text }
end

--- Fold levels for `foldexpr`: ">1" opens a fold, "<1" closes it.
---@param folds {[1]: integer, [2]: integer}[]
---@return table<integer, string>
function M.fold_levels(folds)
  local levels = {}
  for _, range in ipairs(folds) do
    levels[range[1]] = ">1"
    for lnum = range[1] + 1, range[2] - 1 do
      levels[lnum] = "1"
    end
    if range[2] > range[1] then
      levels[range[2]] = "<1"
    end
  end
  return levels
end

return M
