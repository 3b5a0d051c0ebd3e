-- The rule list against the real daemon: :Bonsai rules add, the list, and its
-- keys (t toggles, e edits, x deletes after asking); a change made elsewhere
-- (bonsai/rules/changed) redraws the open list by itself.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/helpers.lua")
H.load_plugin()

local client = require("bonsai.client")
local methods = require("bonsai.protocol").methods
local panel = require("bonsai.panel")

local function listed()
  local ws = require("bonsai.config").workspace()
  return client.request_sync(methods.rules_list, { workspace = ws }, 5000)
end

local function list_text(p)
  return table.concat(H.lines(p.buf), "\n")
end

--- Put the cursor on the first rule of the open list.
---@param p bonsai.Panel
local function cursor_on_rule(p)
  vim.api.nvim_set_current_win(vim.fn.bufwinid(p.buf))
  local first = math.huge
  for lnum in pairs(p.item_at) do
    first = math.min(first, lnum)
  end
  vim.api.nvim_win_set_cursor(0, { first, 0 })
end

H.test(":Bonsai rules add stores a rule that :Bonsai rules lists", function()
  local seen = H.capture_notify()
  vim.cmd("Bonsai rules add Always use pnpm")
  H.wait(function()
    return #seen > 0
  end, "a confirmation")
  H.contains(seen[1].msg, "bonsai: rule added: Always use pnpm")
  vim.cmd("Bonsai rules")
  local p = H.wait(function()
    local x = panel.get("bonsai://rules")
    return x and x.result and x
  end, "the rule list")
  local lines = H.lines(p.buf)
  H.eq("Rules · 1 rule · 1 on", lines[1])
  H.contains(lines, "● user     Always use pnpm")
end)

H.test("t switches the rule off in the daemon", function()
  local p = assert(panel.get("bonsai://rules"))
  cursor_on_rule(p)
  vim.cmd("normal t")
  H.wait(function()
    local result = listed()
    return result and result.rules[1].enabled == false
  end, "the daemon to switch the rule off")
  H.wait(function()
    return list_text(p):find("○ user     Always use pnpm", 1, true)
  end, "the list to show it off")
end)

H.test("e edits the rule's text", function()
  local p = assert(panel.get("bonsai://rules"))
  cursor_on_rule(p)
  local prompts = H.answer_input({ "Always use pnpm 9" })
  vim.cmd("normal e")
  H.wait(function()
    local result = listed()
    return result and result.rules[1].text == "Always use pnpm 9"
  end, "the daemon to store the new text")
  H.eq({ "rule> " }, prompts)
  H.wait(function()
    return list_text(p):find("Always use pnpm 9", 1, true)
  end, "the list to show the new text")
end)

H.test("a rule added elsewhere shows up without a refresh", function()
  local p = assert(panel.get("bonsai://rules"))
  local ws = require("bonsai.config").workspace()
  client.request_sync(methods.rules_add, { workspace = ws, text = "Never touch generated files" })
  H.wait(function()
    return list_text(p):find("Never touch generated files", 1, true)
  end, "bonsai/rules/changed to redraw the list")
  H.contains(H.lines(p.buf)[1], "Rules · 2 rules · 1 on")
end)

H.test("x deletes the rule under the cursor after confirming", function()
  local p = assert(panel.get("bonsai://rules"))
  cursor_on_rule(p)
  local asked = H.answer_select(function(items)
    return items[1]
  end)
  vim.cmd("normal x")
  H.wait(function()
    return #asked == 1
  end, "the confirmation prompt")
  H.contains(asked[1].opts.prompt, 'Delete rule "Always use pnpm 9"')
  H.wait(function()
    local result = listed()
    return result and #result.rules == 1
  end, "the daemon to delete the rule")
  H.wait(function()
    return not list_text(p):find("pnpm", 1, true)
  end, "the list to refresh")
end)

H.run()
