-- requires: sim
-- The context ledger against the real daemon: it lists the session's nodes,
-- `p`/`u`/`d`/`s`/`r` change a node's state in the daemon, <CR> shows its text and `v`
-- cycles the views.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/helpers.lua")
H.load_plugin()

local client = require("bonsai.client")
local methods = require("bonsai.protocol").methods
local ledger = require("bonsai.ledger")

local sid, lv

--- The state of a node as the daemon reports it (a second, separate request).
---@param id string
---@return string?
local function daemon_state(id)
  local result = assert(client.request_sync(methods.ctx_get, { sessionId = sid, view = "ledger" }))
  for _, node in ipairs(result.nodes) do
    if node.id == id then
      return node.state
    end
  end
end

--- Put the cursor on the node labelled with the first user message, once the
--- ledger is up to date (no refresh in flight), and return its id.
---@param state string? wait until the ledger shows the node in this state
---@param label string? another node's label (default: the first user message)
---@return string
local function cursor_on_message_node(state, label)
  local found = H.wait(function()
    if lv.loading or lv.dirty then
      return nil
    end
    for l, node_id in pairs(lv.node_at) do
      for _, node in ipairs(lv.result.nodes) do
        local wanted = node.label:find(label or "hello ledger", 1, true)
          and (not state or node.state == state)
        if node.id == node_id and wanted then
          return { l, node_id }
        end
      end
    end
  end, "the ledger to show the message node " .. (state or ""))
  vim.api.nvim_set_current_win(vim.fn.bufwinid(lv.buf))
  vim.api.nvim_win_set_cursor(0, { found[1], 0 })
  return found[2]
end

H.test(":Bonsai ctx lists the nodes of the session under a fill bar", function()
  -- longer than a stub: stubbing a shorter node is refused (it would grow the context)
  vim.cmd("Bonsai chat hello ledger and a few more words, so that the message is longer than its stub would be and a few more words, so that the message is longer than its stub would be and a few more words, so that the message is longer than its stub would be")
  sid = H.wait(function()
    return require("bonsai").current_session()
  end, "a session", 20000)
  H.wait(function()
    local view = require("bonsai.chat").view(sid)
    return view and view.model.seen and vim.tbl_count(view.model.seen) >= 2 and view.running == nil
  end, "the first turn to finish", 20000)
  local chat_win = vim.fn.bufwinid(vim.fn.bufnr("bonsai://chat/" .. sid))
  local chat_width = vim.api.nvim_win_get_width(chat_win)
  vim.cmd("Bonsai ctx")
  lv = H.wait(function()
    local v = ledger.view(sid)
    return v and v.result and v
  end, "the ledger")
  H.eq(vim.fn.bufnr("bonsai://ctx/" .. sid), vim.api.nvim_get_current_buf())
  local lines = H.lines(0)
  H.truthy(
    lines[1]:match("^%[[█░]+%] %d+%%  [%d,]+ / [%d,]+ tokens$"),
    "fill bar header: " .. lines[1]
  )
  H.contains(lines, "view: [ledger] wire turns")
  H.truthy(vim.tbl_count(lv.node_at) >= 2, "nodes listed")
  H.eq(chat_width, vim.api.nvim_win_get_width(chat_win), "the ledger did not squeeze the chat")
  local width = vim.api.nvim_win_get_width(0)
  for _, line in ipairs({ lines[1], lines[2], lines[3] }) do
    H.truthy(vim.fn.strdisplaywidth(line) <= width, ("header fits %d columns: %s"):format(width, line))
  end
end)

H.test("p pins the node under the cursor in the daemon, u unpins it", function()
  local id = cursor_on_message_node("full")
  vim.cmd("normal p")
  H.wait(function()
    return daemon_state(id) == "pinned"
  end, "the daemon to report the node pinned")
  H.wait(function()
    return vim.api.nvim_get_current_line():find("◆ pinned", 1, true)
  end, "the ledger line to show it pinned")
  cursor_on_message_node("pinned")
  vim.cmd("normal u")
  H.wait(function()
    return daemon_state(id) == "full"
  end, "the daemon to report the node unpinned")
end)

H.test("d drops the node, r restores it, s stubs it", function()
  local id = cursor_on_message_node("full")
  local steps = { { "d", "dropped" }, { "r", "full" }, { "s", "stubbed" }, { "r", "full" } }
  for i, step in ipairs(steps) do
    cursor_on_message_node(i > 1 and steps[i - 1][2] or "full")
    vim.cmd("normal " .. step[1])
    H.wait(function()
      return daemon_state(id) == step[2]
    end, ("`%s` to leave the node %s"):format(step[1], step[2]))
  end
end)

H.test("the cursor stays on the node it acted on: s moves it up, r restores it", function()
  -- the reply: stubbed, it moves up into the stubs section above the messages
  local id = cursor_on_message_node("full", "The ledger has something")
  local line_before = vim.api.nvim_win_get_cursor(0)[1]
  vim.cmd("normal s")
  H.wait(function()
    return daemon_state(id) == "stubbed"
  end, "the daemon to report the node stubbed")
  H.wait(function()
    return not lv.loading and vim.api.nvim_get_current_line():find("stubbed", 1, true)
  end, "the cursor on the stubbed node's line", 20000)
  H.truthy(vim.api.nvim_win_get_cursor(0)[1] ~= line_before, "the node moved to the stubs section")
  vim.cmd("normal r") -- no cursor move in between: what a user does
  H.wait(function()
    return daemon_state(id) == "full"
  end, "r right after s to restore the same node")
end)

H.test("<CR> shows the node's full text", function()
  local id = cursor_on_message_node("full")
  vim.api.nvim_feedkeys(vim.keycode("<CR>"), "x", false)
  local preview = H.wait(function()
    local b = vim.fn.bufnr("bonsai://ctx-node/" .. id)
    return b ~= -1 and b
  end, "the text preview")
  H.contains(H.lines(preview), "hello ledger")
  vim.cmd("close")
end)

H.test("v cycles the ledger, wire and turns views", function()
  vim.api.nvim_set_current_win(vim.fn.bufwinid(lv.buf))
  vim.cmd("normal v")
  H.wait(function()
    return table.concat(H.lines(lv.buf), "\n"):find("view: ledger [wire] turns", 1, true)
  end, "the wire view")
  H.contains(H.lines(lv.buf), "── messages (")
  vim.cmd("normal v")
  H.wait(function()
    return table.concat(H.lines(lv.buf), "\n"):find("view: ledger wire [turns]", 1, true)
  end, "the turns view")
  vim.cmd("normal v")
  H.wait(function()
    return lv.view == "ledger" and table.concat(H.lines(lv.buf), "\n"):find("[ledger]", 1, true)
  end, "back to the ledger")
end)

H.test("the open ledger refreshes by itself when the context changes", function()
  vim.api.nvim_set_current_buf(lv.buf)
  local before = #lv.result.nodes
  require("bonsai.chat").send("one more thing", sid)
  H.wait(function()
    return lv.result
      and #lv.result.nodes > before
      and table.concat(H.lines(lv.buf), "\n"):find("one more thing", 1, true)
  end, "the new message in the ledger", 20000)
end)

H.test("d on a tool result says why in words; D drops its whole step", function()
  require("bonsai.chat").send("what is in the workspace?", sid)
  local result_node = H.wait(function()
    for _, node in ipairs(lv.result and lv.result.nodes or {}) do
      if node.kind == "tool_result" and not lv.loading and not lv.dirty then
        return node
      end
    end
  end, "a tool result in the ledger", 20000)
  H.contains(result_node.label, "list_dir")
  H.not_contains(result_node.label, "`")
  local line
  for l, id in pairs(lv.node_at) do
    if id == result_node.id then
      line = l
    end
  end
  vim.api.nvim_set_current_win(vim.fn.bufwinid(lv.buf))
  vim.api.nvim_win_set_cursor(0, { line, 0 })
  local seen = H.capture_notify()
  vim.cmd("normal d")
  H.wait(function()
    return #seen > 0
  end, "the refusal")
  H.contains(seen[1].msg, "drop the whole step")
  H.contains(seen[1].msg, "(press D to drop the whole step)")
  H.truthy(not seen[1].msg:find("m_%x%x%x%x"), "no ids in the refusal: " .. seen[1].msg)
  vim.api.nvim_win_set_cursor(0, { line, 0 })
  vim.cmd("normal D")
  H.wait(function()
    return daemon_state(result_node.id) == "dropped" and daemon_state(result_node.step) == "dropped"
  end, "the step and its result dropped")
end)

H.test("daemon messages reach the user without node ids", function()
  local without = ledger.without_ids
  H.eq("this node is already dropped", without("node m_b52309817f4f46c0 is already dropped"))
  H.eq("no ledger node", without("no ledger node 'm_0f6c1234abcd9876'"))
  H.eq("this node is a system message", without("m_0f6c1234abcd9876 is a system message"))
  H.eq("the result of bash", without("the result of bash"))
end)

H.test("on a local server that exposes no window and sends no usage, the header says so", function()
  -- As if this Neovim had been started with a local OpenAI-compatible server:
  -- the simulator (no /props, no window in /v1/models, no usage in its streams)
  -- under a model name bonsai does not know. The next send carries them.
  vim.env.BONSAI_PROVIDER = "openai-compatible"
  vim.env.BONSAI_MODEL = "tiny-local"
  require("bonsai.chat").send("hello local server", sid)
  H.wait(function()
    local totals = lv.result and lv.result.totals
    return totals and totals.windowSource == "default for an unknown model" and totals.billedReported == false
  end, "the ledger of the local server", 30000)
  H.wait(function()
    return not lv.loading and not lv.dirty
  end, "the ledger to settle")
  local lines = H.lines(lv.buf)
  local header = table.concat(vim.list_slice(lines, 1, vim.fn.index(lines, "")), "\n")
  H.contains(header, "window 8,192")
  H.contains(header, "billed: not reported by the server")
  H.not_contains(header, "billed 0")
  H.truthy(header:find("estimated [%d,]+"), "bonsai's estimate is shown: " .. header)
  H.contains(header:gsub("\n  ", " "), "window from default for an unknown model")
  H.contains(header:gsub("\n  ", " "), "! unknown window: set providers.models.tiny-local.context_window")
  -- the simulator answers bonsai's tool probe with text: the tools notice is a note too
  H.contains(header:gsub("\n  ", " "), "! tiny-local on this server cannot call tools")
  local width = vim.api.nvim_win_get_width(vim.fn.bufwinid(lv.buf))
  for _, line in ipairs(vim.split(header, "\n")) do
    H.truthy(vim.fn.strdisplaywidth(line) <= width, ("header fits %d columns: %s"):format(width, line))
  end
  local marks = vim.api.nvim_buf_get_extmarks(lv.buf, -1, 0, -1, { details = true })
  H.truthy(vim.iter(marks):any(function(m)
    return m[4].hl_group == "WarningMsg"
  end), "the note is highlighted")
end)

H.run()
