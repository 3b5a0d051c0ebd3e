---@mod bonsai.ledger The context ledger side split (`:Bonsai ctx`)
---
--- Lists the nodes of a session's context window with their tokens and
--- state under a fill-bar header. Keys act on the node under the cursor:
--- `p` pin, `u` unpin, `d` drop, `s` stub, `r` restore, `<CR>` show its full
--- text, `v` cycle the ledger / wire / turns views. Refreshed on
--- `bonsai/ctx/changed`.

local client = require("bonsai.client")
local config = require("bonsai.config")
local events = require("bonsai.events")
local protocol = require("bonsai.protocol")
local render = require("bonsai.ledger_render")
local state = require("bonsai.state")
local ui = require("bonsai.ui")

local methods = protocol.methods

local M = {}

---@class bonsai.LedgerView
---@field buf integer
---@field session_id string
---@field view string
---@field node_at table<integer, string>
---@field result bonsai.CtxGetResult?
---@field loading boolean
---@field dirty boolean

---@type table<string, bonsai.LedgerView>
local views = {}

---@param session_id string
---@return bonsai.LedgerView?
function M.view(session_id)
  return views[session_id]
end

--- Fetch the current view of the ledger and redraw. Refreshes requested
--- while one is in flight are coalesced into one more.
---@param lv bonsai.LedgerView
---@param cb fun()?
function M.refresh(lv, cb)
  if lv.loading then
    lv.dirty = true
    return
  end
  lv.loading = true
  local params = { sessionId = lv.session_id, view = lv.view }
  client.request(methods.ctx_get, params, function(err, result)
    lv.loading = false
    if err then
      vim.notify("bonsai: " .. methods.ctx_get .. " failed: " .. err.message, vim.log.levels.ERROR)
    elseif vim.api.nvim_buf_is_valid(lv.buf) then
      lv.result = result
      local win = vim.fn.bufwinid(lv.buf)
      local width = win ~= -1 and vim.api.nvim_win_get_width(win) or 80
      local out = render.render(result, config.get().ledger.bar_width, width)
      local kept = win ~= -1 and (lv.node_at or {})[vim.api.nvim_win_get_cursor(win)[1]] or nil
      lv.node_at = out.node_at
      ui.set_lines(lv.buf, out.lines)
      M.mark_notes(lv.buf, out.lines)
      M.follow(win, out.node_at, kept)
    end
    if lv.dirty then
      lv.dirty = false
      M.refresh(lv, cb)
    elseif cb then
      cb()
    end
  end)
end

--- Keep the cursor on the node it was on before a redraw: an action moves a node
--- to another section (a stub to `stubs`), and the next key must act on it again.
---@param win integer the ledger's window, -1 when it is not shown
---@param node_at table<integer, string> the redrawn lines' node ids
---@param id string? the node under the cursor before the redraw
function M.follow(win, node_at, id)
  if win == -1 or not id then
    return
  end
  for line, node_id in pairs(node_at) do
    if node_id == id then
      vim.api.nvim_win_set_cursor(win, { line, vim.api.nvim_win_get_cursor(win)[2] })
      return
    end
  end
end

local notes_ns = vim.api.nvim_create_namespace("bonsai.ledger.notes")

--- Highlight the header's notes ("! unknown window: …", with their wrapped lines).
---@param buf integer
---@param lines string[]
function M.mark_notes(buf, lines)
  vim.api.nvim_buf_clear_namespace(buf, notes_ns, 0, -1)
  local in_note = false
  for i, line in ipairs(lines) do
    if line == "" then
      break -- the header ends at its blank line
    end
    in_note = line:sub(1, 2) == "! " or (in_note and line:sub(1, 2) == "  ")
    if in_note then
      vim.hl.range(buf, notes_ns, "WarningMsg", { i - 1, 0 }, { i - 1, #line })
    end
  end
end

--- The node id on the cursor line of the ledger window.
---@param lv bonsai.LedgerView
---@return string?
local function node_under_cursor(lv)
  local id = lv.node_at[vim.api.nvim_win_get_cursor(0)[1]]
  if not id then
    vim.notify("bonsai: no context node on this line", vim.log.levels.WARN)
  end
  return id
end

--- Pin, unpin, drop, stub or restore the node under the cursor.
---@param lv bonsai.LedgerView
---@param action "pin"|"unpin"|"drop"|"stub"|"restore"
function M.act(lv, action)
  local id = node_under_cursor(lv)
  if not id then
    return
  end
  local params = { sessionId = lv.session_id, nodeId = id }
  local method = methods["ctx_" .. action]
  client.request(method, params, function(err)
    if err then
      local message = ("bonsai: %s failed: %s"):format(action, M.without_ids(err.message))
      local node = M.node(lv, id)
      if action == "drop" and node and node.step then
        -- a tool result alone cannot go: say how to drop its whole step
        message = message .. (" (press %s to drop the whole step)"):format(config.get().ledger.keys.drop_step)
      end
      vim.notify(message, vim.log.levels.ERROR)
    end
    M.refresh(lv)
  end)
end

--- A daemon message without node ids (`m_3f9c…` means nothing to a user).
---@param text string
---@return string
function M.without_ids(text)
  local id = "'?%f[%w][a-z][a-z]?[a-z]?_%x%x%x%x%x%x%x%x+'?"
  text = text:gsub("(ledger node) " .. id, "%1")
  text = text:gsub("node " .. id, "this node")
  return (text:gsub(id, "this node"))
end

--- The ledger node `id` of the last result shown.
---@param lv bonsai.LedgerView
---@param id string
---@return bonsai.CtxNode?
function M.node(lv, id)
  for _, n in ipairs(lv.result and lv.result.nodes or {}) do
    if n.id == id then
      return n
    end
  end
end

--- Drop the whole step of the node under the cursor: the assistant message
--- that made the calls and all their results (a result alone cannot go).
---@param lv bonsai.LedgerView
function M.drop_step(lv)
  local id = node_under_cursor(lv)
  if not id then
    return
  end
  local node = M.node(lv, id)
  local head = node and (node.step or (node.kind == "assistant" and node.id)) or nil
  if not head then
    vim.notify("bonsai: this line is not part of a tool step", vim.log.levels.WARN)
    return
  end
  local params = { sessionId = lv.session_id, nodeId = head }
  client.call(methods.ctx_drop, params, function()
    M.refresh(lv)
  end)
end

--- Show the full text of the node under the cursor.
---@param lv bonsai.LedgerView
function M.expand(lv)
  local id = node_under_cursor(lv)
  if not id then
    return
  end
  local params = { sessionId = lv.session_id, nodeId = id }
  client.call(methods.ctx_text, params, function(result)
    ui.preview("bonsai://ctx-node/" .. id, ui.lines(result.text))
  end)
end

---@param lv bonsai.LedgerView
local function setup_buffer(lv)
  local buf = lv.buf
  vim.b[buf].bonsai_session = lv.session_id
  local actions = {}
  for _, action in ipairs({ "pin", "unpin", "drop", "stub", "restore" }) do
    actions[action] = {
      function()
        M.act(lv, action)
      end,
      action .. " the node under the cursor",
    }
  end
  actions.drop_step = {
    function()
      M.drop_step(lv)
    end,
    "drop the whole step (the call and its results)",
  }
  actions.expand = {
    function()
      M.expand(lv)
    end,
    "show the node's text",
  }
  actions.cycle_view = {
    function()
      lv.view = render.next_view(lv.view)
      M.refresh(lv)
    end,
    "cycle ledger / wire / turns",
  }
  actions.refresh = {
    function()
      M.refresh(lv)
    end,
    "refresh",
  }
  actions.close = {
    function()
      ui.close()
    end,
    "close",
  }
  ui.map_keys(buf, config.get().ledger.keys, actions)
  vim.api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    callback = function()
      views[lv.session_id] = nil
    end,
  })
end

--- Open the ledger of a session (the current one by default).
---@param session_id string?
---@param view ("ledger"|"wire"|"turns")?
---@param cb fun(lv: bonsai.LedgerView)? called after the first refresh
function M.open(session_id, view, cb)
  session_id = state.require_session(session_id)
  if not session_id then
    return
  end
  local cfg = config.get().ledger
  local lv = views[session_id]
  if not lv or not vim.api.nvim_buf_is_valid(lv.buf) then
    local buf = ui.scratch("bonsai://ctx/" .. session_id, "bonsai-ctx")
    lv = { buf = buf, session_id = session_id, view = cfg.view, node_at = {} }
    lv.loading, lv.dirty = false, false
    views[session_id] = lv
    setup_buffer(lv)
  end
  lv.view = view or lv.view
  ui.show(lv.buf, cfg.split, cfg.size)
  vim.wo[0][0].wrap = false
  vim.wo[0][0].cursorline = true
  M.refresh(lv, cb and function()
    cb(lv)
  end or nil)
end

events.on("ctx_changed", function(params)
  local lv = views[params.sessionId]
  if lv and vim.api.nvim_buf_is_valid(lv.buf) then
    M.refresh(lv)
  end
end)

events.on("client_started", function()
  for _, lv in pairs(views) do
    if vim.api.nvim_buf_is_valid(lv.buf) then
      M.refresh(lv)
    end
  end
end)

return M
