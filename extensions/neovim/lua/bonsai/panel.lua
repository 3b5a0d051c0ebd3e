---@mod bonsai.panel A list buffer backed by one daemon request
---
--- Episodes and memory are both "fetch a list, render one line per item,
--- act on the item under the cursor". This module holds that pattern.

local client = require("bonsai.client")
local state = require("bonsai.state")
local ui = require("bonsai.ui")

local M = {}

---@class bonsai.PanelSpec
---@field name string buffer name, e.g. "bonsai://memory"
---@field filetype string
---@field config bonsai.PanelConfig
---@field method string request that fetches the list
---@field params fun(): table
---@field render fun(result: any): string[], table<integer, any> lines and line → item
---@field actions table<string, {[1]: fun(panel: bonsai.Panel, item: any), [2]: string, needs_item: boolean?}>

---@class bonsai.Panel
---@field spec bonsai.PanelSpec
---@field buf integer
---@field item_at table<integer, any>
---@field result any

---@type table<string, bonsai.Panel>
local panels = {}

--- Fetch and redraw. `cb(panel)` runs after the redraw.
---@param panel bonsai.Panel
---@param cb fun(panel: bonsai.Panel)?
function M.refresh(panel, cb)
  client.call(panel.spec.method, panel.spec.params(), function(result)
    if not vim.api.nvim_buf_is_valid(panel.buf) then
      return
    end
    panel.result = result
    local lines, item_at = panel.spec.render(result)
    panel.item_at = item_at
    ui.set_lines(panel.buf, lines)
    if cb then
      cb(panel)
    end
  end)
end

--- The item on the cursor line, if any.
---@param panel bonsai.Panel
---@return any
function M.item_under_cursor(panel)
  return panel.item_at[vim.api.nvim_win_get_cursor(0)[1]]
end

---@param panel bonsai.Panel
local function map_actions(panel)
  local actions = {}
  for action, spec in pairs(panel.spec.actions) do
    actions[action] = {
      function()
        local item = M.item_under_cursor(panel)
        if spec.needs_item ~= false and item == nil then
          vim.notify("bonsai: nothing to act on at this line", vim.log.levels.WARN)
          return
        end
        spec[1](panel, item)
      end,
      spec[2],
    }
  end
  actions.refresh = {
    function()
      M.refresh(panel)
    end,
    "refresh",
  }
  actions.close = {
    function()
      ui.close()
    end,
    "close",
  }
  ui.map_keys(panel.buf, panel.spec.config.keys, actions)
end

--- Open (or focus) a panel and refresh it.
---@param spec bonsai.PanelSpec
---@param cb fun(panel: bonsai.Panel)?
---@return bonsai.Panel
function M.open(spec, cb)
  local panel = panels[spec.name]
  if not panel or not vim.api.nvim_buf_is_valid(panel.buf) then
    local buf = ui.scratch(spec.name, spec.filetype)
    panel = { spec = spec, buf = buf, item_at = {} }
    panels[spec.name] = panel
    map_actions(panel)
    vim.api.nvim_create_autocmd("BufWipeout", {
      buffer = buf,
      callback = function()
        panels[spec.name] = nil
      end,
    })
  end
  panel.spec = spec
  ui.show(panel.buf, spec.config.split, spec.config.size)
  vim.wo[0][0].wrap = false
  vim.wo[0][0].cursorline = true
  M.refresh(panel, cb)
  return panel
end

--- The open panel with this buffer name, if any.
---@param name string
---@return bonsai.Panel?
--- Open a session's panel (the given session, else this buffer's, else the current one).
---@param make_spec fun(session_id: string): table
---@param session_id string?
---@param cb fun(p: bonsai.Panel)?
function M.open_for_session(make_spec, session_id, cb)
  session_id = state.require_session(session_id)
  if session_id then
    M.open(make_spec(session_id), cb)
  end
end

function M.get(name)
  return panels[name]
end

return M
