import { describe, expect, it } from "vitest";
import { conversationNodes } from "../../src/conversation/conversationModel";
import type { TreeGetResult } from "../../src/protocol.generated";

const base = { state: "visible", tokens: 10, branchTokens: 10, confidence: "exact", seq: 1 } as const;

const TREE: TreeGetResult = {
  nodes: [
    { ...base, nodeId: "q1", kind: "question", label: "parse DICOM headers", onActivePath: true },
    { ...base, nodeId: "a1", parentId: "q1", kind: "answer", label: "parse_header reads it", onActivePath: true },
    {
      ...base,
      nodeId: "q2",
      parentId: "a1",
      kind: "question",
      label: "add a CLI",
      attach: { score: 0, reason: "only generic words", similarity: "lexical", placed: false },
    },
    {
      ...base,
      nodeId: "q3",
      parentId: "q2",
      kind: "question",
      label: "why is PixelRepresentation signed?",
      attach: { target: "a1", score: 0.62, reason: "specific term", similarity: "lexical", placed: false },
    },
  ],
  activePath: ["q1", "a1"],
  recycleBin: [],
  pathTokens: 20,
};

describe("conversationNodes", () => {
  it("groups rows by turn, one level per turn, and offers the suggested move on questions", () => {
    const rows = conversationNodes("s1", TREE);
    expect(rows.map((r) => r.id)).toEqual(["q1", "q2", "q3"]);
    const [root, q2, q3] = rows;
    expect(root?.children?.map((c) => c.id)).toEqual(["a1"]);
    expect(q2).toMatchObject({ contextValue: "turn.suggested", data: { target: "" } });
    expect(q2?.description).toContain("→ move under the root (0.00)");
    expect(q3?.description).toContain("→ move under «parse_header reads it» (0.62)");
    expect(q3?.data).toEqual({ sessionId: "s1", nodeId: "q3", target: "a1" });
    expect(root?.icon?.color).toBe("charts.green");
  });

  it("gives each branch of a fork its own row", () => {
    const forked: TreeGetResult = {
      ...TREE,
      nodes: [
        { ...base, nodeId: "q1", kind: "question", label: "run the tests" },
        { ...base, nodeId: "a1", parentId: "q1", kind: "answer", label: "failed" },
        { ...base, nodeId: "q2", parentId: "a1", kind: "question", label: "retry" },
        { ...base, nodeId: "q3", parentId: "a1", kind: "question", label: "retry again" },
      ],
      activePath: ["q1", "a1", "q3"],
    };
    const rows = conversationNodes("s1", forked);
    expect(rows.map((r) => r.id)).toEqual(["q1", "branch:q2", "branch:q3"]);
    expect(rows[1]?.children?.map((c) => c.id)).toEqual(["q2"]);
    expect(rows[2]).toMatchObject({ label: "branch 2", description: "active" });
  });
});
