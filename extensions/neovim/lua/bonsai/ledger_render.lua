---@mod bonsai.ledger_render Lines of the context views (ledger, wire, turns)
---
--- Pure: takes a `bonsai/ctx/get` result, returns lines and, for the ledger
--- view, which node each line shows.

local ui = require("bonsai.ui")

local M = {}

M.VIEWS = { "ledger", "wire", "turns" }

---@type table<string, string>
M.STATE_MARK = {
  full = "●",
  pinned = "◆",
  stubbed = "○",
  dropped = "✗",
  summarized = "≡",
  archived = "▣",
}

---@class bonsai.LedgerLines
---@field lines string[]
---@field node_at table<integer, string> line number → node id

--- Join `parts` with `sep` into lines no wider than `width`. A part is cut
--- only when it alone is wider: then it is word-wrapped on lines of its own.
---@param parts string[]
---@param sep string
---@param width integer
---@return string[]
function M.fit(parts, sep, width)
  local lines, line = {}, nil
  for _, part in ipairs(parts) do
    if vim.fn.strdisplaywidth(part) > width then
      if line then
        table.insert(lines, line)
        line = nil
      end
      vim.list_extend(lines, M.wrap(part, width, "  "))
    elseif line == nil then
      line = part
    elseif vim.fn.strdisplaywidth(line .. sep .. part) <= width then
      line = line .. sep .. part
    else
      table.insert(lines, line)
      line = part
    end
  end
  if line then
    table.insert(lines, line)
  end
  return lines
end

--- Word-wrap `text` to `width` columns; continuation lines start with `indent`.
---@param text string
---@param width integer
---@param indent string?
---@return string[]
function M.wrap(text, width, indent)
  indent = indent or ""
  local lines, line = {}, nil
  for word in text:gmatch("%S+") do
    local candidate = line and (line .. " " .. word) or ((#lines > 0 and indent or "") .. word)
    if line and vim.fn.strdisplaywidth(candidate) > width then
      table.insert(lines, line)
      line = indent .. word
    else
      line = candidate
    end
  end
  if line then
    table.insert(lines, line)
  end
  return lines
end

--- What the last request cost: bonsai's estimate, and what the server billed
--- (a server that sends no usage is said to, never shown as 0).
---@param totals bonsai.CtxTotals
---@return string[]
function M.billed(totals)
  local parts = { "estimated " .. ui.thousands(totals.estimatedInput or 0) }
  if totals.billedReported == false then
    table.insert(parts, "billed: not reported by the server")
  else
    table.insert(parts, "billed " .. ui.thousands(totals.billedInput))
    table.insert(parts, "cached " .. ui.thousands(totals.cachedInput))
  end
  return parts
end

---@param totals bonsai.CtxTotals?
---@param view string
---@param bar_width integer
---@param width integer? the window's width (no limit when nil)
---@return string[]
function M.header(totals, view, bar_width, width)
  width = width or math.huge
  local tabs = {}
  for _, name in ipairs(M.VIEWS) do
    table.insert(tabs, name == view and ("[" .. name .. "]") or name)
  end
  local out = {}
  if totals then
    local bar = ui.bar(totals.percent, math.max(5, math.min(bar_width, width - 30)))
    vim.list_extend(
      out,
      M.fit({
        ("%s %d%%"):format(bar, math.floor(totals.percent + 0.5)),
        ("%s / %s tokens"):format(ui.thousands(totals.used), ui.thousands(totals.usable)),
      }, "  ", width)
    )
    local figures = { "window " .. ui.thousands(totals.window), "reserve " .. ui.thousands(totals.reserve) }
    vim.list_extend(figures, M.billed(totals))
    table.insert(figures, (totals.confidence or "low") .. " confidence")
    vim.list_extend(out, M.fit(figures, " · ", width))
    if (totals.windowSource or "") ~= "" then
      vim.list_extend(out, M.wrap("window from " .. totals.windowSource, width, "  "))
    end
    for _, note in ipairs(totals.windowNotes or {}) do
      vim.list_extend(out, M.wrap("! " .. note, width, "  "))
    end
  end
  vim.list_extend(
    out,
    M.fit({ "view: " .. table.concat(tabs, " "), "(v cycles, R refreshes, D drops a step)" }, "   ", width)
  )
  table.insert(out, "")
  return out
end

---@param node bonsai.CtxNode
---@return string
function M.node_line(node)
  local reason = node.reason ~= "" and ("  — " .. node.reason) or ""
  local label = node.label:gsub("\n", " ")
  return ("%s %-10s %8s  %s%s"):format(
    M.STATE_MARK[node.state] or "?",
    node.state,
    ui.thousands(node.tokens),
    label,
    reason
  )
end

---@param result bonsai.CtxGetResult
---@param out string[]
---@param node_at table<integer, string>
local function ledger_body(result, out, node_at)
  local section = nil
  for _, node in ipairs(result.nodes or {}) do
    if node.section ~= section then
      section = node.section
      table.insert(out, ("── %s ──"):format(section))
    end
    table.insert(out, M.node_line(node))
    node_at[#out] = node.id
  end
  if #(result.nodes or {}) == 0 then
    table.insert(out, "(no nodes yet: send a message first)")
  end
end

---@param entry table
---@return string
local function wire_entry(entry)
  local role = entry.role or entry.type or entry.name or "?"
  local content = entry.content or entry.text or entry.description or ""
  if type(content) ~= "string" then
    content = vim.json.encode(content)
  end
  local first = vim.split(content, "\n", { plain = true })[1] or ""
  if vim.fn.strchars(first) > 80 then
    first = vim.fn.strcharpart(first, 0, 79) .. "…"
  end
  return ("%-9s %s  (%s chars)"):format(role, first, ui.thousands(#content))
end

---@param result bonsai.CtxGetResult
---@param out string[]
local function wire_body(result, out)
  for _, group in ipairs({ "system", "tools", "messages" }) do
    local entries = result[group] or {}
    table.insert(out, ("── %s (%d) ──"):format(group, #entries))
    for _, entry in ipairs(entries) do
      if group == "tools" then
        local fn = entry["function"] or entry
        table.insert(out, "tool      " .. tostring(fn.name or "?"))
      else
        table.insert(out, wire_entry(entry))
      end
    end
  end
end

---@param result bonsai.CtxGetResult
---@param out string[]
local function turns_body(result, out)
  for _, turn in ipairs(result.turns or {}) do
    table.insert(
      out,
      ("turn %d  in %s  out %s  cached %s  estimated %s"):format(
        turn.turn,
        ui.thousands(turn.inputTokens),
        ui.thousands(turn.outputTokens),
        ui.thousands(turn.cachedTokens),
        ui.thousands(turn.estimatedTokens)
      )
    )
    for _, ev in ipairs(turn.events or {}) do
      local change = ev.tokensBefore
          and (" %s → %s"):format(
            ui.thousands(ev.tokensBefore),
            ui.thousands(ev.tokensAfter or 0)
          )
        or ""
      table.insert(out, ("  %s%s %s"):format(ev.kind, change, ev.detail or ""))
    end
  end
  if #(result.turns or {}) == 0 then
    table.insert(out, "(no turns yet)")
  end
end

--- Render a `bonsai/ctx/get` result.
---@param result bonsai.CtxGetResult
---@param bar_width integer
---@param width integer? the window's width
---@return bonsai.LedgerLines
function M.render(result, bar_width, width)
  local out = M.header(result.totals, result.view, bar_width, width)
  local node_at = {}
  if result.view == "wire" then
    wire_body(result, out)
  elseif result.view == "turns" then
    turns_body(result, out)
  else
    ledger_body(result, out, node_at)
  end
  return { lines = out, node_at = node_at }
end

--- The view after `view` in the cycle ledger → wire → turns.
---@param view string
---@return string
function M.next_view(view)
  for i, name in ipairs(M.VIEWS) do
    if name == view then
      return M.VIEWS[i % #M.VIEWS + 1]
    end
  end
  return M.VIEWS[1]
end

return M
