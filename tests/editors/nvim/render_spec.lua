-- What the views show for daemon payloads shaped like the protocol's: chat
-- streaming and dedup, tool folds, the ledger header, episodes and memory.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/helpers.lua")
H.load_plugin()

local model_ops = require("bonsai.chat_model")
local render = require("bonsai.chat_render")

---@param id string
---@param role string
---@param content string
---@param extra table?
local function msg(id, role, content, extra)
  return vim.tbl_extend(
    "force",
    { messageId = id, role = role, content = content, createdAt = 0 },
    extra or {}
  )
end

local function ev(kind, fields)
  return vim.tbl_extend(
    "force",
    { sessionId = "s1", turnId = "t1", seq = 0, kind = kind },
    fields or {}
  )
end

H.test("streamed deltas accumulate into one reply that ends in the buffer's last line", function()
  local m = model_ops.new("demo", 20)
  model_ops.add_message(m, msg("m1", "user", "hi"))
  H.eq("render", model_ops.apply_event(m, ev("delta", { text = "Hel" })))
  H.eq("append", model_ops.apply_event(m, ev("delta", { text = "lo\nwor" })))
  H.eq("append", model_ops.apply_event(m, ev("delta", { text = "ld" })))
  local out = render.render(m)
  H.eq({ "# bonsai · demo", "", "## You", "hi", "", "## bonsai", "Hello", "world" }, out.lines)
  H.truthy(out.tail_is_text, "the reply is still streaming")
end)

H.test("the finished assistant message replaces the streamed text (never shown twice)", function()
  local m = model_ops.new("", 20)
  model_ops.add_message(m, msg("m1", "user", "hi"))
  model_ops.apply_event(m, ev("delta", { text = "Hello" }))
  model_ops.add_message(m, msg("m2", "assistant", "Hello"))
  model_ops.apply_event(m, ev("done"))
  local out = render.render(m)
  H.eq({ "# bonsai · untitled", "", "## You", "hi", "", "## bonsai", "Hello", "" }, out.lines)
  H.eq(false, model_ops.add_message(m, msg("m2", "assistant", "Hello")), "duplicate ignored")
end)

H.test("a reply whose message never arrives stays visible after done", function()
  local m = model_ops.new("", 20)
  model_ops.apply_event(m, ev("delta", { text = "partial" }))
  model_ops.apply_event(m, ev("done"))
  H.contains(render.render(m).lines, "partial")
end)

H.test("tool calls render as closed folds with their result", function()
  local m = model_ops.new("", 2)
  local call = { id = "c1", name = "read_file", arguments = '{"path":"src/app.py"}' }
  model_ops.add_message(m, msg("m1", "assistant", "Let me look.", { toolCalls = { call } }))
  model_ops.add_message(m, msg("m2", "tool", "line 1\nline 2\nline 3", { toolCallId = "c1" }))
  local out = render.render(m)
  H.eq({
    "# bonsai · untitled",
    "",
    "## bonsai",
    "Let me look.",
    "▸ read_file(path=src/app.py) ✓",
    "  args:",
    "    path: src/app.py",
    "  result:",
    "    line 1",
    "    line 2",
    "    … 1 more lines",
    "",
  }, out.lines)
  H.eq({ { 5, 11 } }, out.folds)
  local levels = render.fold_levels(out.folds)
  H.eq(">1", levels[5])
  H.eq("1", levels[8])
  H.eq("<1", levels[11])
  H.eq(nil, levels[12])
end)

H.test("live tool events show a running call, then its result", function()
  local m = model_ops.new("", 20)
  model_ops.apply_event(
    m,
    ev("toolCall", { toolCallId = "c9", name = "bash", args = { command = "ls" } })
  )
  H.contains(render.render(m).lines, "▸ bash(command=ls) …")
  model_ops.apply_event(m, ev("toolResult", { toolCallId = "c9", result = "boom", isError = true }))
  local lines = render.render(m).lines
  H.contains(lines, "▸ bash(command=ls) ✗")
  H.contains(lines, "  error:\n    boom")
end)

H.test("multi-line tool arguments are indented under their key", function()
  local lines =
    render.args_lines({ path = "a.py", content = "x = 1\ny = 2", flags = { 1, 2 } }, "  ")
  H.eq({ "  content: |", "    x = 1", "    y = 2", "  flags: [1,2]", "  path: a.py" }, lines)
end)

H.test(
  "the daemon's order (assistant message, then tool events, then tool message) shows each call once",
  function()
    local m = model_ops.new("", 20)
    model_ops.add_message(m, msg("m1", "user", "look"))
    model_ops.apply_event(m, ev("delta", { text = "Reading." }))
    local call = { id = "c1", name = "read_file", arguments = '{"path":"a.py"}' }
    model_ops.add_message(m, msg("m2", "assistant", "Reading.", { toolCalls = { call } }))
    model_ops.apply_event(
      m,
      ev("toolCall", { toolCallId = "c1", name = "read_file", args = { path = "a.py" } })
    )
    H.contains(render.render(m).lines, "▸ read_file(path=a.py) …")
    model_ops.apply_event(
      m,
      ev("toolResult", { toolCallId = "c1", result = "x = 1", isError = false })
    )
    model_ops.add_message(m, msg("m3", "tool", "x = 1", { toolCallId = "c1" }))
    model_ops.apply_event(m, ev("delta", { text = "Done." }))
    model_ops.add_message(m, msg("m4", "assistant", "Done."))
    model_ops.apply_event(m, ev("done"))
    local out = render.render(m)
    local text = table.concat(out.lines, "\n")
    local _, calls = text:gsub("▸ read_file", "")
    H.eq(1, calls, "one fold for the call")
    local _, reading = text:gsub("Reading%.", "")
    H.eq(1, reading, "streamed text replaced by the message")
    H.contains(out.lines, "▸ read_file(path=a.py) ✓")
    H.eq("Done.", out.lines[#out.lines - 1])
  end
)

H.test("errors of a turn and notes are shown where they happened", function()
  local m = model_ops.new("", 20)
  model_ops.add_message(m, msg("m1", "user", "go"))
  model_ops.apply_event(m, ev("delta", { text = "Working" }))
  model_ops.note(m, "approved edit_file")
  model_ops.apply_event(m, ev("error", { message = "provider unreachable" }))
  H.eq({
    "# bonsai · untitled",
    "",
    "## You",
    "go",
    "",
    "» approved edit_file",
    "",
    "## bonsai",
    "Working",
    "» error: provider unreachable",
    "",
  }, render.render(m).lines)
end)

H.test("consecutive steps of one reply share one header", function()
  local m = model_ops.new("", 20)
  local call = { id = "c1", name = "list_dir", arguments = "{}" }
  model_ops.add_message(m, msg("m1", "user", "ls"))
  model_ops.add_message(m, msg("m2", "assistant", "", { toolCalls = { call } }))
  model_ops.add_message(m, msg("m3", "tool", "a.py", { toolCallId = "c1" }))
  model_ops.add_message(m, msg("m4", "assistant", "One file."))
  local text = table.concat(render.render(m).lines, "\n")
  H.eq(1, H.count(text, "## bonsai"))
  H.contains(text, "▸ list_dir() ✓")
  H.contains(text, "\n\nOne file.\n")
end)

H.test("the ledger header shows a fill bar, percent and totals", function()
  local lr = require("bonsai.ledger_render")
  local out = lr.render({
    view = "ledger",
    totals = {
      window = 128000,
      usable = 112000,
      used = 56000,
      percent = 50,
      reserve = 16000,
      billedInput = 50000,
      cachedInput = 40000,
      estimatedInput = 52000,
      confidence = "high",
    },
    nodes = {
      {
        id = "n1",
        kind = "system",
        section = "system",
        label = "system prompt",
        tokens = 1200,
        confidence = "exact",
        state = "full",
        reason = "",
      },
      {
        id = "n2",
        kind = "tool",
        section = "messages",
        label = "read src/app.py",
        tokens = 3400,
        confidence = "high",
        state = "stubbed",
        reason = "superseded read",
      },
    },
  }, 10)
  H.eq("[█████░░░░░] 50%  56,000 / 112,000 tokens", out.lines[1])
  H.contains(
    out.lines[2],
    "window 128,000 · reserve 16,000 · estimated 52,000 · billed 50,000 · cached 40,000 · high confidence"
  )
  H.contains(out.lines[3], "view: [ledger] wire turns")
  local narrow = lr.header({
    percent = 50,
    used = 56000,
    usable = 112000,
    window = 128000,
    reserve = 16000,
    billedInput = 50000,
    cachedInput = 40000,
    confidence = "high",
  }, "ledger", 20, 40)
  for _, line in ipairs(narrow) do
    H.truthy(vim.fn.strdisplaywidth(line) <= 40, "a header line fits a 40-column window: " .. line)
  end
  H.contains(table.concat(narrow, "\n"), "high confidence")
  H.eq("── system ──", out.lines[5])
  H.eq("● full          1,200  system prompt", out.lines[6])
  H.eq("○ stubbed       3,400  read src/app.py  — superseded read", out.lines[8])
  H.eq({ [6] = "n1", [8] = "n2" }, out.node_at)
  H.eq("wire", lr.next_view("ledger"))
  H.eq("ledger", lr.next_view("turns"))
end)

H.test("a command while the first session is still starting says so", function()
  local state = require("bonsai.state")
  local seen = H.capture_notify()
  state.creating = true
  H.eq(nil, state.require_session())
  state.creating = false
  H.eq(nil, state.require_session())
  H.contains(seen[1].msg, "the session is still starting: try again in a moment")
  H.contains(seen[2].msg, "no session yet: open one with :Bonsai chat")
end)

H.test("a tool call's summary starts with what it is about", function()
  local render = require("bonsai.chat_render")
  H.eq(
    "path=test_cart.py, new_string=    x = 1⏎, old_string=y",
    render.args_summary('{"new_string": "    x = 1\\n", "old_string": "y", "path": "test_cart.py"}')
  )
  H.eq("command=pytest -q, timeout=30", render.args_summary({ timeout = 30, command = "pytest -q" }))
end)

H.test("the ledger header says where the window came from, its notes, and unreported usage", function()
  local lr = require("bonsai.ledger_render")
  local note = "unknown window: set providers.models.tiny-local.context_window (assuming 8,192 tokens for 'tiny-local')"
  local lines = lr.header({
    percent = 30,
    used = 1869,
    usable = 6144,
    window = 8192,
    reserve = 2048,
    billedInput = 0,
    cachedInput = 0,
    estimatedInput = 1865,
    confidence = "low",
    windowSource = "default for an unknown model",
    windowNotes = { note },
    billedReported = false,
  }, "ledger", 20, 44)
  local text = table.concat(lines, "\n")
  for _, line in ipairs(lines) do
    H.truthy(vim.fn.strdisplaywidth(line) <= 44, "a header line fits a 44-column window: " .. line)
  end
  H.contains(text, "estimated 1,865")
  H.contains(text, "billed: not reported by the server")
  H.not_contains(text, "billed 0")
  H.contains(text, "window from default for an unknown model")
  local start = vim.iter(ipairs(lines)):find(function(_, l)
    return l:find("^! unknown window") ~= nil
  end)
  H.truthy(start, "the note starts a line: " .. text)
  local joined = {}
  for i = start, #lines do
    if i > start and not lines[i]:find("^  ") then
      break
    end
    table.insert(joined, vim.trim(lines[i]))
  end
  H.eq("! " .. note, table.concat(joined, " "), "the whole note, wrapped")
end)

H.test("episodes and memory lists render one line per item", function()
  local lines, item_at = require("bonsai.episodes").render({
    episodes = {
      {
        number = 1,
        title = "Fix the parser",
        state = "archived",
        tokensBefore = 12000,
        tokensAfter = 900,
      },
      { number = 2, title = "Add tests", state = "open", tokensBefore = 3000, tokensAfter = 0 },
    },
  })
  H.eq("#1   archived      12,000 → 900  Fix the parser", lines[3])
  H.eq("#2   open                 3,000  Add tests", lines[4])
  H.eq(vim.fn.strdisplaywidth(lines[3]:match("^(.-900)")), #lines[4]:match("^(.-3,000)"), "aligned")
  H.eq(2, item_at[4].number)
  local mlines, mitems = require("bonsai.memory").render({
    entries = {
      {
        name = "prefers-thiserror",
        tier = "project",
        type = "preference",
        description = "Use thiserror at module boundaries",
        path = "/p/.bonsai/memory/prefers-thiserror.md",
        enabled = false,
      },
    },
    issues = { "bad.md: missing frontmatter" },
    embeddings = "off",
  })
  H.eq("Memory · 1 entry · embeddings: off", mlines[1])
  H.contains(mlines, "issue: bad.md: missing frontmatter")
  H.contains(
    mlines,
    "○ project prefers-thiserror            preference Use thiserror at module boundaries"
  )
  H.eq("prefers-thiserror", mitems[#mlines].name)
end)

H.test("recalled background data is a folded chip, never the user's message", function()
  local m = model_ops.new("t", 20)
  model_ops.add_message(m, { messageId = "u1", role = "user", content = "how do we deploy?", createdAt = 1 })
  model_ops.add_message(m, {
    messageId = "u2",
    role = "user",
    name = "memory",
    content = '<background-data source="bonsai-memory">…</background-data>',
    createdAt = 2,
    recalled = { sources = { "memory" }, titles = { "deploy-checklist" }, text = "Deploys use make." },
  })
  local out = render.render(m)
  local text = table.concat(out.lines, "\n")
  H.eq(1, H.count(text, "## You"), "one user message")
  H.contains(text, "▸ recalled: deploy-checklist (memory)\n    Deploys use make.")
  H.not_contains(text, "background-data")
  local chip
  for i, line in ipairs(out.lines) do
    if line:find("▸ recalled", 1, true) then
      chip = i
    end
  end
  H.eq({ chip, chip + 1 }, out.folds[#out.folds], "the chip is folded")
end)

H.test("a retry line shows during the backoff and goes when the reply streams", function()
  local m = model_ops.new("t", 20)
  model_ops.apply_event(m, { sessionId = "s", turnId = "t1", seq = 1, kind = "retry", text = "retrying in 8 s (rate limited; attempt 2)" })
  H.contains(table.concat(render.render(m).lines, "\n"), "» retrying in 8 s (rate limited; attempt 2)")
  model_ops.apply_event(m, { sessionId = "s", turnId = "t1", seq = 2, kind = "delta", text = "Hello" })
  local text = table.concat(render.render(m).lines, "\n")
  H.not_contains(text, "retrying")
  H.contains(text, "Hello")
end)

H.run()
