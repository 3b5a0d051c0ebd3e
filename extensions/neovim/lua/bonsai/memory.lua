---@mod bonsai.memory The memory manager (`:Bonsai memory`, `:Bonsai remember`)
---
--- Lists the memory entries of both tiers. `<CR>` opens the entry's markdown
--- file (editing it directly is the intended way), `x` forgets it after a
--- confirmation, `t` toggles it for retrieval, `a` remembers a new fact.
--- Promotion suggestions from the daemon are confirmed with |vim.ui.select()|.

local client = require("bonsai.client")
local config = require("bonsai.config")
local panel = require("bonsai.panel")
local protocol = require("bonsai.protocol")

local methods = protocol.methods

local M = {}

M.NAME = "bonsai://memory"

---@param entry bonsai.MemoryEntryInfo
---@return string
function M.line(entry)
  local ui = require("bonsai.ui")
  return ("%s %s %s %s %s"):format(
    entry.enabled and "●" or "○",
    ui.pad(entry.tier, 7),
    ui.pad(entry.name, 28),
    ui.pad(entry.type, 10),
    entry.description
  )
end

---@param result bonsai.MemoryListResult
---@return string[]
---@return table<integer, bonsai.MemoryEntryInfo>
function M.render(result)
  local lines = {
    ("Memory · %d %s · embeddings: %s"):format(
      #result.entries,
      #result.entries == 1 and "entry" or "entries",
      result.embeddings or "off"
    ),
    "(<CR> open · x forget · t toggle · a add · R refresh)",
  }
  if result.advisory and result.advisory ~= "" then
    table.insert(lines, "note: " .. result.advisory)
  end
  for _, issue in ipairs(result.issues or {}) do
    table.insert(lines, "issue: " .. issue)
  end
  table.insert(lines, "")
  local item_at = {}
  for _, entry in ipairs(result.entries) do
    table.insert(lines, M.line(entry))
    item_at[#lines] = entry
  end
  if #result.entries == 0 then
    table.insert(lines, "(no entries: :Bonsai remember <fact>)")
  end
  return lines, item_at
end

--- Remember a fact.
---@param fact string
---@param tier "user"|"project"
---@param cb fun(entry: bonsai.MemoryEntryInfo)?
function M.remember(fact, tier, cb)
  local params = { fact = fact, tier = tier, workspace = config.workspace() }
  client.call(methods.memory_add, params, function(result)
    vim.notify(("bonsai: remembered %s (%s)"):format(result.entry.name, tier), vim.log.levels.INFO)
    local open = panel.get(M.NAME)
    if open then
      panel.refresh(open)
    end
    if cb then
      cb(result.entry)
    end
  end)
end

--- Forget an entry after asking, then refresh the open list.
---@param _ any
---@param entry bonsai.MemoryEntryInfo
local function forget(_, entry)
  local prompt = ("Forget memory %q (%s)?"):format(entry.name, entry.path)
  vim.ui.select({ "Forget", "Keep" }, { prompt = prompt, kind = "bonsai.confirm" }, function(c)
    if c ~= "Forget" then
      return
    end
    local params = { name = entry.name, workspace = config.workspace() }
    client.call(methods.memory_forget, params, function()
      vim.notify(("bonsai: forgot %s"):format(entry.name), vim.log.levels.INFO)
      local open = panel.get(M.NAME)
      if open then
        panel.refresh(open)
      end
    end)
  end)
end

---@param p bonsai.Panel
---@param entry bonsai.MemoryEntryInfo
local function toggle(p, entry)
  local params = { name = entry.name, enabled = not entry.enabled, workspace = config.workspace() }
  client.call(methods.memory_set_enabled, params, function()
    panel.refresh(p)
  end)
end

---@param entry bonsai.MemoryEntryInfo
local function open_file(_, entry)
  vim.cmd("wincmd p")
  vim.cmd.edit(vim.fn.fnameescape(entry.path))
end

M.TIERS = {
  { tier = "project", label = "Project memory (this repository, shared with its users)" },
  { tier = "user", label = "User memory (you, in every project)" },
}

--- Ask for a fact, then which tier keeps it.
local function add()
  vim.ui.input({ prompt = "remember> " }, function(fact)
    if not fact or vim.trim(fact) == "" then
      return
    end
    local labels = vim.tbl_map(function(t)
      return t.label
    end, M.TIERS)
    vim.ui.select(labels, { prompt = "Remember where?", kind = "bonsai.memory_tier" }, function(_, idx)
      if idx then
        M.remember(fact, M.TIERS[idx].tier)
      end
    end)
  end)
end

---@return bonsai.PanelSpec
local function spec()
  return {
    name = M.NAME,
    filetype = "bonsai-memory",
    config = config.get().memory,
    method = methods.memory_list,
    params = function()
      return { workspace = config.workspace() }
    end,
    render = M.render,
    actions = {
      open = { open_file, "open the entry's file" },
      forget = { forget, "forget the entry" },
      toggle = { toggle, "enable or disable the entry" },
      add = { add, "remember a new fact", needs_item = false },
    },
  }
end

--- Open the memory list.
---@param cb fun(p: bonsai.Panel)? called after the list is drawn
function M.open(cb)
  panel.open(spec(), cb)
end

--- Forget an entry by name (`:Bonsai memory forget {name}`), after asking.
---@param name string
function M.forget_by_name(name)
  local params = { name = name, workspace = config.workspace() }
  client.call(methods.memory_get, params, function(result)
    forget(nil, result.entry)
  end)
end

---@param fact any
---@return string
local function fact_text(fact)
  if type(fact) == "table" then
    return fact.fact or fact.text or vim.json.encode(fact)
  end
  return tostring(fact)
end

--- Ask which suggested facts to remember.
---@param params bonsai.MemorySuggestionParams
function M.suggest(params)
  local facts = vim.tbl_map(fact_text, params.facts or {})
  if #facts == 0 then
    return
  end
  local items = { ("Remember all %d"):format(#facts) }
  for _, fact in ipairs(facts) do
    table.insert(items, "Remember: " .. fact)
  end
  table.insert(items, "Dismiss")
  local prompt = "bonsai found durable facts before compacting. Remember them?"
  vim.ui.select(items, { prompt = prompt, kind = "bonsai.memory_suggestion" }, function(_, idx)
    if not idx or idx == #items then
      return
    end
    local chosen = idx == 1 and facts or { facts[idx - 1] }
    for _, fact in ipairs(chosen) do
      M.remember(fact, "user")
    end
  end)
end

return M
