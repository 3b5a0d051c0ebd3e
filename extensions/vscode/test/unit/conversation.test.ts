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
  it("nests rows by parent and offers the suggested move on questions", () => {
    const root = conversationNodes("s1", TREE)[0];
    if (root === undefined) {
      throw new Error("no root row");
    }
    expect(root.id).toBe("q1");
    const q2 = root.children?.[0]?.children?.[0];
    const q3 = q2?.children?.[0];
    expect(q2).toMatchObject({ contextValue: "turn.suggested", data: { target: "" } });
    expect(q2?.description).toContain("→ move under the root (0.00)");
    expect(q3?.description).toContain("→ move under «parse_header reads it» (0.62)");
    expect(q3?.data).toEqual({ sessionId: "s1", nodeId: "q3", target: "a1" });
    expect(root.icon?.color).toBe("charts.green");
  });
});
