---@mod bonsai.tree The conversation tree (`:Bonsai tree`)
---
--- One line per node, indented by depth; `*` marks the active path. A question
--- the attachment rule would put elsewhere shows `→ move under …` with its
--- score: `m` moves it there (a tree op), `<CR>` jumps to a node. The panel
--- redraws on `bonsai/tree/changed` and on new messages.

local client = require("bonsai.client")
local config = require("bonsai.config")
local events = require("bonsai.events")
local panel = require("bonsai.panel")
local protocol = require("bonsai.protocol")

local methods = protocol.methods

local M = {}

local MARK = { question = "?", answer = "A", tool_result = "T", system = "S" }

---@param text string
---@param max integer
---@return string
local function short(text, max)
  text = text:gsub("\n", " ")
  -- by characters, not bytes: cutting a multibyte character in half breaks the line
  return vim.fn.strchars(text) <= max and text or (vim.fn.strcharpart(text, 0, max - 1) .. "…")
end

--- The suggestion of a question not where the rule would put it, or nil.
---@param node table
---@param labels table<string, string>
---@return string?
function M.suggestion(node, labels)
  local attach = node.attach
  if attach == nil or attach == vim.NIL or attach.placed then
    return nil
  end
  local target = attach.target
  local where = (target and target ~= vim.NIL) and ("«" .. short(labels[target] or target, 30) .. "»")
    or "the root"
  return ("→ move under %s (%.2f)"):format(where, attach.score)
end

---@param result table bonsai.TreeGetResult
---@return string[]
---@return table<integer, table>
function M.render(result)
  local lines = { "Conversation tree   (<CR> jump · m move there · R refresh)", "" }
  local item_at, labels, depth, on_path = {}, {}, {}, {}
  for _, id in ipairs(result.activePath or {}) do
    on_path[id] = true
  end
  for _, node in ipairs(result.nodes) do
    labels[node.nodeId] = node.label
  end
  for _, node in ipairs(result.nodes) do
    local parent = node.parentId
    depth[node.nodeId] = (parent and parent ~= vim.NIL and depth[parent] or -1) + 1
    local hint = M.suggestion(node, labels)
    local line = ("%s%s %s %s"):format(
      on_path[node.nodeId] and "*" or " ",
      string.rep("  ", depth[node.nodeId]),
      MARK[node.kind] or "?",
      short(node.label, 60)
    )
    if node.state == "hidden" then
      line = line .. "  [hidden]"
    end
    if hint then
      line = line .. "  " .. hint
    end
    table.insert(lines, line)
    item_at[#lines] = node
  end
  if #result.nodes == 0 then
    table.insert(lines, "(no messages yet)")
  end
  return lines, item_at
end

---@param session_id string
---@return string
local function name(session_id)
  return "bonsai://tree/" .. session_id
end

---@param session_id string
---@return bonsai.PanelSpec
local function spec(session_id)
  local function op(method, params)
    return function(p, node)
      params = vim.tbl_extend("force", { sessionId = session_id, nodeId = node.nodeId }, params(node))
      client.call(method, params, function()
        panel.refresh(p)
      end)
    end
  end
  return {
    name = name(session_id),
    filetype = "bonsai-tree",
    config = config.get().tree,
    method = methods.tree_get,
    params = function()
      return { sessionId = session_id }
    end,
    render = M.render,
    actions = {
      jump = {
        op(methods.tree_jump, function()
          return {}
        end),
        "make this node the active leaf",
      },
      move = {
        function(p, node)
          if M.suggestion(node, {}) == nil then
            vim.notify("bonsai: no suggestion for this line", vim.log.levels.WARN)
            return
          end
          local target = node.attach.target
          op(methods.tree_attach, function()
            return (target and target ~= vim.NIL) and { parentId = target } or {}
          end)(p, node)
        end,
        "move the question where the attachment rule puts it",
      },
    },
  }
end

--- Open the conversation tree of a session (the current one by default).
---@param session_id string?
---@param cb fun(p: bonsai.Panel)?
function M.open(session_id, cb)
  panel.open_for_session(spec, session_id, cb)
end

---@param params table
local function refresh_open(params)
  local p = params.sessionId and panel.get(name(params.sessionId))
  if p then
    panel.refresh(p)
  end
end

events.on("tree_changed", refresh_open)
events.on("session_event", refresh_open)

return M
