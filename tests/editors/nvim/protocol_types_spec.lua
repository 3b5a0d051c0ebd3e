-- The generated protocol module loads in Neovim, and its LuaLS annotations
-- describe chat events as a union of one class per kind that the plugin
-- handles, every one of them.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/helpers.lua")
H.load_plugin()

local path = H.plugin_dir .. "/lua/bonsai/protocol.lua"

--- `---@class bonsai.X` blocks: name → { field = type } (a `?` after the name kept).
---@return table<string, table<string, string>>
local function classes()
  local out, current = {}, nil
  for line in io.lines(path) do
    local name = line:match("^%-%-%-@class bonsai%.(%S+)$")
    if name then
      current = {}
      out[name] = current
    elseif current and line:match("^%-%-%-@field ") then
      local field, type_ = line:match("^%-%-%-@field (%S+) (.+)$")
      H.truthy(field and type_, "a field annotation with a name and a type: " .. line)
      current[field] = type_
    else
      current = nil
    end
  end
  return out
end

--- The members of an `---@alias bonsai.<name> a|b|…` union.
---@param name string
---@return string[]
local function alias(name)
  for line in io.lines(path) do
    local members = line:match("^%-%-%-@alias bonsai%." .. name .. " (.+)$")
    if members then
      return vim.split(members, "|", { plain = true })
    end
  end
  error("no ---@alias bonsai." .. name .. " in " .. path)
end

H.test("the generated module loads and names the chat event notification", function()
  local protocol = require("bonsai.protocol")
  H.eq("bonsai/chat/event", protocol.notifications.chat_event)
  H.truthy(type(protocol.version) == "string" and protocol.version ~= "", "a version")
end)

H.test("chat events are a union of one class per kind, each with its envelope", function()
  local all = classes()
  local kinds = {}
  for _, member in ipairs(alias("ChatEventParams")) do
    local name = member:match("^bonsai%.(%S+)$")
    local class = name and all[name]
    H.truthy(class, "a class for every member of the union: " .. member)
    local kind = class.kind and class.kind:match('^"(%w+)"$')
    H.truthy(kind, member .. " has a literal, required kind: " .. tostring(class.kind))
    H.eq(nil, kinds[kind], "one member per kind: " .. kind)
    kinds[kind] = member
    for _, field in ipairs({ "sessionId", "turnId", "seq" }) do
      H.truthy(class[field], member .. " carries " .. field)
    end
  end
  H.eq("string", all.ChatDeltaParams.text, "a delta's text is required")
  H.eq("boolean", all.ChatToolResultParams.isError, "a tool result says whether it failed")
  H.eq("bonsai.UsageInfo", all.ChatUsageParams.usage)
  local names = vim.tbl_keys(kinds)
  table.sort(names)
  H.eq(
    { "cancelled", "delta", "done", "error", "notice", "retry", "toolCall", "toolResult", "usage" },
    names
  )
  H.eq(names, require("bonsai.chat_model").EVENT_KINDS, "the plugin shows every kind")
end)

H.run()
