-- requires: sim
-- The conversation tree panel on a real session (daemon + simulator): it shows
-- the questions asked, the attachment rule's suggestion on one of them, and `m`
-- moves that question there (a tree op the daemon reports back). A turn whose
-- tests fail is offered a retry; `:Bonsai retry` runs it as a sibling branch.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/helpers.lua")
H.load_plugin()

local client = require("bonsai.client")
local methods = require("bonsai.protocol").methods
local panel = require("bonsai.panel")

local EXCHANGES = {
  { "Set up the project with a pyproject file.", "Done: pyproject configured for the project." },
  {
    "Parse the DICOM headers and expose PixelRepresentation.",
    "parse_header now reads PixelRepresentation from the DICOM header.",
  },
  { "Add a CLI command that prints the version.", "Added a version subcommand to the CLI." },
  { "Document the project in the README.", "The README now documents the project." },
  { "Why is PixelRepresentation signed?", "It is signed when the tag says 1." },
}
local SPECIFIC = EXCHANGES[5][1]
local INTRODUCER = EXCHANGES[2][2]
local sid

---@param label string
---@return table? the daemon's node with this label
local function daemon_node(label)
  local tree = client.request_sync(methods.tree_get, { sessionId = sid }, 5000)
  for _, node in ipairs(tree and tree.nodes or {}) do
    if node.label == label then
      return node
    end
  end
end

---@param p bonsai.Panel
---@param label string
---@return integer? the panel line showing `label`
local function line_of(p, label)
  for lnum, item in pairs(p.item_at) do
    if item.label == label then
      return lnum
    end
  end
end

H.test("five questions asked in a real session", function()
  local buf
  sid, buf = H.open_chat()
  for _, exchange in ipairs(EXCHANGES) do
    require("bonsai.chat").send(exchange[1], sid)
    H.wait(function()
      return table.concat(H.lines(buf), "\n"):find(exchange[2], 1, true)
    end, "the reply to " .. exchange[1], 20000)
  end
end)

H.test(":Bonsai tree shows the questions and the suggestion to move one", function()
  vim.cmd("Bonsai tree")
  local p = H.wait(function()
    local x = panel.get("bonsai://tree/" .. sid)
    return x and x.result and line_of(x, SPECIFIC) and x
  end, "the tree panel with the last question", 10000)
  local lines = H.lines(p.buf)
  H.eq("Conversation tree   (<CR> jump · m move there · R refresh)", lines[1])
  for _, exchange in ipairs(EXCHANGES) do
    H.contains(lines, "? " .. exchange[1])
  end
  local line = lines[line_of(p, SPECIFIC)]
  H.contains(line, "? " .. SPECIFIC .. "  → move under «parse_header now reads PixelR…» (")
  H.eq("*" .. string.rep("  ", 8) .. " ? " .. SPECIFIC, line:match("^(.-)  →"), "under the README answer")
end)

H.test("m on the suggested question moves it under the answer that introduced its term", function()
  local p = assert(panel.get("bonsai://tree/" .. sid))
  local introducer = assert(daemon_node(INTRODUCER), "the introducing answer in the daemon's tree")
  vim.api.nvim_set_current_win(vim.fn.bufwinid(p.buf))
  vim.api.nvim_win_set_cursor(0, { line_of(p, SPECIFIC), 0 })
  vim.cmd("normal m") -- right after the reply: the daemon waits for the post-turn steps
  H.wait(function()
    local node = daemon_node(SPECIFIC)
    return node and node.parentId == introducer.nodeId
  end, "the daemon to record the move")
  H.eq(true, daemon_node(SPECIFIC).attach.placed, "the rule's place, now taken")
  H.wait(function()
    local lnum = line_of(p, SPECIFIC)
    return lnum and not H.lines(p.buf)[lnum]:find("move under", 1, true)
  end, "the panel to redraw without the suggestion")
  local lines = H.lines(p.buf)
  H.eq("*" .. string.rep("  ", 4) .. " ? " .. SPECIFIC, lines[line_of(p, SPECIFIC)], "a sibling of the CLI question")
  H.eq(lines[line_of(p, EXCHANGES[3][1])]:match("^.(%s*)"), lines[line_of(p, SPECIFIC)]:match("^.(%s*)"))
end)

H.test(":Bonsai retry after a failed test run asks the question again as a sibling", function()
  local question = "make parse() return 4"
  local notes = H.capture_notify()
  vim.g.bonsai = { approval = { prompt = "select" } } -- answered through vim.ui.select below
  H.answer_select(function(items)
    H.eq({ "Approve", "Reject" }, items)
    return "Approve"
  end)
  local buf = vim.fn.bufnr("bonsai://chat/" .. sid)
  require("bonsai.chat").send(question, sid)
  local offer = H.wait(function()
    for _, note in ipairs(notes) do
      if note.msg:find("the last turn failed", 1, true) then
        return note.msg
      end
    end
  end, "the retry offer", 20000)
  H.contains(offer, "(tests_failing, medium): [exit code 1]")
  vim.cmd("Bonsai retry")
  H.wait(function()
    return table.concat(H.lines(buf), "\n"):find("Second attempt, with the reflection.", 1, true)
  end, "the retry's reply", 20000)
  local tree = client.request_sync(methods.tree_get, { sessionId = sid }, 5000)
  local parents = {}
  for _, node in ipairs(tree.nodes) do
    if node.kind == "question" and node.label == question then
      table.insert(parents, node.parentId)
    end
  end
  H.eq(2, #parents, "the failed question and its retry")
  H.eq(parents[1], parents[2], "siblings under one parent")
  local p = assert(panel.get("bonsai://tree/" .. sid))
  H.wait(function()
    return H.count(table.concat(H.lines(p.buf), "\n"), "? " .. question) == 2
  end, "the open tree panel to show both branches")
end)

H.run()
