---@mod bonsai.episodes The episode list (`:Bonsai episodes`)
---
--- One line per task episode of a session. `<CR>` recalls an episode's
--- messages into a preview, `/` searches the session's transcript and
--- archives, `r` restores an archived episode into the context.

local client = require("bonsai.client")
local config = require("bonsai.config")
local panel = require("bonsai.panel")
local protocol = require("bonsai.protocol")
local ui = require("bonsai.ui")

local methods = protocol.methods

local M = {}

---@param ep bonsai.EpisodeInfo
---@return string
function M.line(ep)
  local tokens = ep.state == "archived"
      and ("%s → %s"):format(ui.thousands(ep.tokensBefore), ui.thousands(ep.tokensAfter))
    or ui.thousands(ep.tokensBefore)
  return ("#%-3d %-9s %s  %s"):format(ep.number, ep.state, ui.pad(tokens, 16, true), ep.title)
end

---@param result bonsai.EpisodesListResult
---@return string[]
---@return table<integer, bonsai.EpisodeInfo>
function M.render(result)
  local lines = { "Episodes   (<CR> recall · / search · r restore · R refresh)", "" }
  local item_at = {}
  for _, ep in ipairs(result.episodes) do
    table.insert(lines, M.line(ep))
    item_at[#lines] = ep
  end
  if #result.episodes == 0 then
    table.insert(lines, "(no episodes yet)")
  end
  return lines, item_at
end

--- Lines of a recall result.
---@param result bonsai.EpisodesRecallResult
---@return string[]
function M.recall_lines(result)
  local out = {}
  for _, hit in ipairs(result.results) do
    local where = hit.episode and ("episode #%d · "):format(hit.episode) or ""
    table.insert(out, ("## %s (%sscore %.2f)"):format(hit.role, where, hit.score))
    vim.list_extend(out, ui.lines(hit.text ~= "" and hit.text or hit.snippet))
    table.insert(out, "")
  end
  if #out == 0 then
    out = { "(nothing found)" }
  end
  return out
end

---@param session_id string
---@param params table
local function recall(session_id, params)
  params.sessionId = session_id
  client.call(methods.episodes_recall, params, function(result)
    ui.preview("bonsai://recall/" .. session_id, M.recall_lines(result))
  end)
end

---@param session_id string
---@return bonsai.PanelSpec
local function spec(session_id)
  return {
    name = "bonsai://episodes/" .. session_id,
    filetype = "bonsai-episodes",
    config = config.get().episodes,
    method = methods.episodes_list,
    params = function()
      return { sessionId = session_id }
    end,
    render = M.render,
    actions = {
      recall = {
        function(_, ep)
          recall(session_id, { episode = ep.number })
        end,
        "recall the episode's messages",
      },
      search = {
        function()
          vim.ui.input({ prompt = "recall> " }, function(query)
            if query and query ~= "" then
              recall(session_id, { query = query })
            end
          end)
        end,
        "search the session",
        needs_item = false,
      },
      restore = {
        function(p, ep)
          local params = { sessionId = session_id, number = ep.number }
          client.call(methods.episodes_restore, params, function()
            panel.refresh(p)
          end)
        end,
        "restore the episode into the context",
      },
    },
  }
end

--- Open the episode list of a session (the current one by default).
---@param session_id string?
---@param cb fun(p: bonsai.Panel)? called after the list is drawn
function M.open(session_id, cb)
  panel.open_for_session(spec, session_id, cb)
end

return M
