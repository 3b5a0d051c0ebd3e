---@mod bonsai.rules The rule list (`:Bonsai rules`)
---
--- Rules are short standing instructions the daemon sends to the model every
--- turn: hand-written here, or detected in what you type ("always use pnpm").
--- `a` adds one, `e` edits the rule under the cursor, `t` switches it on or
--- off, `x` deletes it after a confirmation. The list redraws itself when the
--- daemon announces a change (`bonsai/rules/changed`), e.g. a detection.

local client = require("bonsai.client")
local config = require("bonsai.config")
local panel = require("bonsai.panel")
local protocol = require("bonsai.protocol")

local methods = protocol.methods

local M = {}

M.NAME = "bonsai://rules"

---@param rule bonsai.RuleInfo
---@return string
function M.line(rule)
  local ui = require("bonsai.ui")
  return ("%s %s %s"):format(rule.enabled and "●" or "○", ui.pad(rule.source, 8), rule.text)
end

---@param result bonsai.RulesListResult
---@return string[]
---@return table<integer, bonsai.RuleInfo>
function M.render(result)
  local on = #vim.tbl_filter(function(rule)
    return rule.enabled
  end, result.rules)
  local lines = {
    ("Rules · %d %s · %d on"):format(#result.rules, #result.rules == 1 and "rule" or "rules", on),
    "(a add · e edit · t toggle · x delete · R refresh)",
    "",
  }
  local item_at = {}
  for _, rule in ipairs(result.rules) do
    table.insert(lines, M.line(rule))
    item_at[#lines] = rule
  end
  if #result.rules == 0 then
    table.insert(lines, "(no rules: press a, or tell the agent “always …” / “never …”)")
  end
  return lines, item_at
end

local function refresh_open()
  local open = panel.get(M.NAME)
  if open then
    panel.refresh(open)
  end
end

--- Add a hand-written rule to this workspace.
---@param text string
---@param cb fun(rule: bonsai.RuleInfo)?
function M.add(text, cb)
  client.call(methods.rules_add, { workspace = config.workspace(), text = text }, function(result)
    vim.notify("bonsai: rule added: " .. result.rule.text, vim.log.levels.INFO)
    refresh_open()
    if cb then
      cb(result.rule)
    end
  end)
end

local function add()
  vim.ui.input({ prompt = "rule> " }, function(text)
    if text and vim.trim(text) ~= "" then
      M.add(text)
    end
  end)
end

---@param p bonsai.Panel
---@param rule bonsai.RuleInfo
local function edit(p, rule)
  vim.ui.input({ prompt = "rule> ", default = rule.text }, function(text)
    if text == nil or text == rule.text then
      return
    end
    client.call(methods.rules_edit, { id = rule.id, text = text }, function()
      panel.refresh(p)
    end)
  end)
end

---@param p bonsai.Panel
---@param rule bonsai.RuleInfo
local function toggle(p, rule)
  client.call(methods.rules_edit, { id = rule.id, enabled = not rule.enabled }, function()
    panel.refresh(p)
  end)
end

---@param p bonsai.Panel
---@param rule bonsai.RuleInfo
local function delete(p, rule)
  local prompt = ("Delete rule %q?"):format(rule.text)
  vim.ui.select({ "Delete", "Keep" }, { prompt = prompt, kind = "bonsai.confirm" }, function(c)
    if c ~= "Delete" then
      return
    end
    client.call(methods.rules_delete, { id = rule.id }, function()
      panel.refresh(p)
    end)
  end)
end

---@return bonsai.PanelSpec
local function spec()
  return {
    name = M.NAME,
    filetype = "bonsai-rules",
    config = config.get().rules,
    method = methods.rules_list,
    params = function()
      return { workspace = config.workspace() }
    end,
    render = M.render,
    actions = {
      add = { add, "add a rule", needs_item = false },
      edit = { edit, "edit the rule" },
      toggle = { toggle, "switch the rule on or off" },
      delete = { delete, "delete the rule" },
    },
  }
end

--- Open the rule list.
---@param cb fun(p: bonsai.Panel)? called after the list is drawn
function M.open(cb)
  panel.open(spec(), cb)
end

--- The daemon changed this workspace's rules: redraw an open list.
---@param params bonsai.RulesChangedParams
function M.changed(params)
  local open = panel.get(M.NAME)
  if open and params.change == "detected" then
    vim.notify("bonsai: rule detected in your message; see :Bonsai rules", vim.log.levels.INFO)
  end
  refresh_open()
end

return M
