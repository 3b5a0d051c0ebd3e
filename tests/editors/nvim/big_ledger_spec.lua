-- A ledger of 500+ nodes (a long imported session) against the real daemon: every
-- node is listed, a node far down is pinned in the daemon with `p`, the cursor stays on
-- it through the redraw, and a poll that changes nothing leaves the buffer as it was.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/helpers.lua")
H.load_plugin()

local client = require("bonsai.client")
local methods = require("bonsai.protocol").methods
local ledger = require("bonsai.ledger")

local CALLS = 260 -- each a tool call and its result: 521 messages

--- A Claude Code transcript of one task and `CALLS` file reads, one entry a line.
---@param path string
local function write_recording(path)
  local base = { sessionId = "big", cwd = vim.fn.getcwd(), version = "2.0.1", userType = "external" }
  local lines, parent = {}, vim.NIL
  local function entry(uuid, kind, message)
    local e = vim.tbl_extend("force", base, {
      uuid = uuid,
      parentUuid = parent,
      isSidechain = false,
      type = kind,
      message = message,
    })
    parent = uuid
    table.insert(lines, vim.json.encode(e))
  end
  entry("u0", "user", { role = "user", content = "Read every module and summarise the big ledger" })
  for i = 1, CALLS do
    local id = ("toolu_%03d"):format(i)
    entry("a" .. i, "assistant", {
      id = "msg_" .. i,
      role = "assistant",
      content = { { type = "tool_use", id = id, name = "Read", input = { file_path = ("/w/m%03d.py"):format(i) } } },
    })
    entry("r" .. i, "user", {
      role = "user",
      content = { { type = "tool_result", tool_use_id = id, content = ("module %03d: "):format(i) .. ("x = 1\n"):rep(20) } },
    })
  end
  vim.fn.writefile(lines, path)
end

local sid, lv

H.test("a session of 521 messages imports and its ledger lists every node", function()
  local path = vim.fn.getcwd() .. "/big.jsonl"
  write_recording(path)
  local result, err = client.request_sync(
    methods.session_import,
    { path = path, format = "claude-code", run = 0, workspace = vim.fn.getcwd() },
    60000
  )
  H.truthy(result, "imported: " .. tostring(err))
  H.eq(1 + 2 * CALLS, result.messages, "every message imported")
  sid = result.sessionId
  vim.cmd("Bonsai attach " .. sid)
  H.wait(function()
    return require("bonsai").current_session() == sid
  end, "the attach", 30000)
  vim.cmd("Bonsai ctx")
  lv = H.wait(function()
    local v = ledger.view(sid)
    return v and v.result and not v.loading and v
  end, "the ledger", 60000)
  local listed = vim.tbl_count(lv.node_at)
  H.truthy(#lv.result.nodes >= 500, ("500+ nodes in the answer: %d"):format(#lv.result.nodes))
  H.eq(#lv.result.nodes, listed, "one line per node")
  local text = table.concat(H.lines(lv.buf), "\n")
  H.contains(text, "m001.py")
  H.contains(text, ("m%03d.py"):format(CALLS))
end)

H.test("p pins a node far down in the daemon and the cursor stays on it", function()
  local target, line
  for l, id in pairs(lv.node_at) do
    for _, node in ipairs(lv.result.nodes) do
      if node.id == id and node.label:find("m250.py", 1, true) then
        target, line = id, l
      end
    end
  end
  H.truthy(target, "the node of the 250th read")
  vim.api.nvim_set_current_win(vim.fn.bufwinid(lv.buf))
  vim.api.nvim_win_set_cursor(0, { line, 0 })
  vim.cmd("normal p")
  H.wait(function()
    local result = client.request_sync(methods.ctx_get, { sessionId = sid, view = "ledger" })
    for _, node in ipairs(result and result.nodes or {}) do
      if node.id == target then
        return node.state == "pinned"
      end
    end
  end, "the daemon to report it pinned", 30000)
  H.wait(function()
    return not lv.loading and vim.api.nvim_get_current_line():find("◆ pinned", 1, true)
  end, "the line under the cursor to show it pinned", 30000)
  H.eq(target, lv.node_at[vim.api.nvim_win_get_cursor(0)[1]], "the cursor stayed on the node")
end)

H.test("a refresh with nothing moved leaves the 500 lines as they were", function()
  H.wait(function()
    return not lv.loading
  end, "no refresh in flight", 30000)
  local before = H.lines(lv.buf)
  local done = false
  ledger.refresh(lv, function()
    done = true
  end)
  H.wait(function()
    return done and not lv.loading
  end, "the refresh", 30000)
  H.eq(before, H.lines(lv.buf), "the same lines")
end)

H.run()
