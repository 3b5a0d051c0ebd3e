-- The conversation tree panel's lines (attachment suggestions) and the retry
-- offer of autoReflect (:Bonsai retry).
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/helpers.lua")
H.load_plugin()

local tree = require("bonsai.tree")
local reflect = require("bonsai.reflect")

local function node(id, parent, kind, label, attach)
  return {
    nodeId = id,
    parentId = parent,
    kind = kind,
    label = label,
    state = "visible",
    tokens = 5,
    branchTokens = 5,
    seq = 1,
    confidence = "exact",
    attach = attach,
  }
end

H.test("the tree indents by depth, marks the active path and shows suggestions", function()
  local result = {
    nodes = {
      node("q1", vim.NIL, "question", "parse DICOM headers"),
      node("a1", "q1", "answer", "parse_header reads it"),
      node("q2", "a1", "question", "add a CLI", { score = 0, reason = "generic", placed = false }),
      node(
        "q3",
        "q2",
        "question",
        "why is PixelRepresentation signed?",
        { target = "a1", score = 0.62, reason = "specific", placed = false }
      ),
      node("q4", "a1", "question", "placed already", { target = "a1", score = 0.7, placed = true }),
    },
    activePath = { "q1", "a1" },
    recycleBin = {},
    pathTokens = 10,
  }
  local lines, item_at = tree.render(result)
  H.eq("* ? parse DICOM headers", lines[3])
  H.eq("*   A parse_header reads it", lines[4])
  H.contains(lines[5], "→ move under the root (0.00)")
  H.contains(lines[6], "      ? why is PixelRepresentation signed?  → move under «parse_header reads it» (0.62)")
  H.not_contains(lines[7], "move under")
  H.eq("q3", item_at[6].nodeId)
end)

H.test("long labels are cut by characters, never inside a multibyte one", function()
  local label = string.rep("é", 70)
  local lines = tree.render({
    nodes = { node("q1", vim.NIL, "question", label) },
    activePath = { "q1" },
    recycleBin = {},
    pathTokens = 5,
  })
  H.eq("* ? " .. string.rep("é", 59) .. "…", lines[3])
end)

H.test(":Bonsai retry takes the latest offer once; without one it says so", function()
  local notes = H.capture_notify()
  reflect.offered({
    sessionId = "s1",
    offerId = "r_1",
    questionId = "m1",
    reflection = "The previous attempt failed",
    grade = { kind = "tests_failing", severity = "medium", evidence = { "$ pytest", "[exit code 1]" } },
  })
  H.contains(notes[#notes].msg, "tests_failing, medium): [exit code 1]")
  H.contains(notes[#notes].msg, ":Bonsai retry")
  H.eq("r_1", reflect.pending.offerId)
  reflect.pending = nil
  vim.cmd("Bonsai retry")
  H.contains(notes[#notes].msg, "no retry offer")
end)

H.run()
