import { describe, expect, it } from "vitest";
import type { CtxGetResult, CtxNode } from "../../src/protocol.generated";
import {
  headerMessage,
  ledgerNodes,
  nextView,
  turnNodes,
  usableExplanation,
  wireNodes,
} from "../../src/ledger/ledgerModel";
import { withoutIds } from "../../src/util/format";

function node(id: string, section: CtxNode["section"], state: CtxNode["state"], tokens: number): CtxNode {
  return {
    id,
    kind: "message",
    section,
    label: `label ${id}`,
    tokens,
    confidence: "high",
    state,
    reason: state === "stubbed" ? "superseded read" : "",
    turn: 2,
  };
}

const ledger: CtxGetResult = {
  view: "ledger",
  totals: {
    window: 128_000,
    usable: 112_000,
    used: 47_040,
    percent: 42,
    reserve: 16_000,
    billedInput: 40_000,
    cachedInput: 30_000,
  },
  nodes: [
    node("m1", "messages", "full", 1200),
    node("sys", "system", "pinned", 800),
    node("m2", "messages", "stubbed", 40),
    node("m3", "messages", "dropped", 900),
  ],
};

describe("ledgerNodes", () => {
  it("puts totals first and sections in a fixed order", () => {
    const roots = ledgerNodes("s1", ledger);
    expect(roots.map((root) => root.label)).toEqual([
      "42% of 112k usable",
      "window 128k · reserve 16k",
      "System",
      "Messages",
    ]);
  });

  it("counts a section's tokens without dropped nodes", () => {
    const messages = ledgerNodes("s1", ledger)[3];
    expect(messages?.description).toBe("3 · 1.2k tok");
    expect(messages?.children?.map((child) => child.id)).toEqual(["node:m1", "node:m2", "node:m3"]);
  });

  it("gives each node its state icon, a menu context value and a text action", () => {
    const [m1, m2] = ledgerNodes("s1", ledger)[3]?.children ?? [];
    expect(m1).toMatchObject({
      icon: { id: "circle-filled" },
      contextValue: "ctxNode.full",
      description: "1.2k · full",
    });
    expect(m2).toMatchObject({ icon: { id: "fold-up" }, contextValue: "ctxNode.stubbed" });
    expect(m2?.tooltip).toContain("reason: superseded read");
    expect(m1?.action).toEqual({ kind: "ctxText", sessionId: "s1", nodeId: "m1", label: "label m1" });
    expect(m1?.data).toEqual({ sessionId: "s1", nodeId: "m1", state: "full" });
  });

  it("marks low-confidence estimates", () => {
    const roots = ledgerNodes("s1", {
      view: "ledger",
      nodes: [{ ...node("x", "tools", "full", 5000), confidence: "low" }],
    });
    expect(roots[0]?.children?.[0]?.description).toBe("~5k · full");
  });
});

describe("the ledger header", () => {
  const unknown: CtxGetResult = {
    view: "ledger",
    totals: {
      ...(ledger.totals as NonNullable<CtxGetResult["totals"]>),
      window: 8192,
      reserve: 2048,
      billedInput: 0,
      estimatedInput: 1865,
      windowSource: "default for an unknown model",
      windowNotes: ["unknown window: set providers.models.tiny.context_window (assuming 8,192 tokens for 'tiny')"],
      billedReported: false,
    },
    nodes: [node("sys", "system", "pinned", 800)],
  };

  it("says where the window came from, with the notes above the tree", () => {
    const [totals, window, next] = ledgerNodes("s1", unknown);
    expect(totals?.description).toBe("47k used · estimated 1.9k · billed: not reported by the server");
    expect(window).toMatchObject({
      label: "window 8.2k · reserve 2k",
      description: "from default for an unknown model",
    });
    expect(window?.tooltip).toContain("**Window 8,192 tokens**, from default for an unknown model.");
    expect(next?.label).toBe("System");
    expect(headerMessage(unknown.totals)).toBe(
      "⚠ unknown window: set providers.models.tiny.context_window (assuming 8,192 tokens for 'tiny')",
    );
    expect(headerMessage(ledger.totals)).toBeUndefined();
  });

  it("shows billed and cached figures when the server reported usage", () => {
    const [totals] = ledgerNodes("s1", { ...unknown, totals: { ...ledger.totals!, estimatedInput: 41_000 } });
    expect(totals?.description).toBe("47k used · estimated 41k · billed 40k · cached 30k");
  });
});

describe("steps: a tool call and its results", () => {
  const step: CtxGetResult = {
    view: "ledger",
    nodes: [
      { ...node("a1", "messages", "full", 50), kind: "assistant" },
      { ...node("r1", "messages", "full", 900), kind: "tool_result", step: "a1" },
      { ...node("a2", "messages", "full", 30), kind: "assistant" },
    ],
  };

  it("marks the call and its result as a step, with the step's head for Drop the Whole Step", () => {
    const [a1, r1, a2] = ledgerNodes("s1", step)[0]?.children ?? [];
    expect(a1).toMatchObject({ contextValue: "ctxNode.full.step", data: { nodeId: "a1", step: "a1" } });
    expect(r1).toMatchObject({ contextValue: "ctxNode.full.step", data: { nodeId: "r1", step: "a1" } });
    expect(a2?.contextValue).toBe("ctxNode.full");
    expect(a2?.data).not.toHaveProperty("step");
  });

  it("says the daemon's messages without node ids", () => {
    expect(withoutIds("node m_b52309817f4f46c0 is already dropped")).toBe("this node is already dropped");
    expect(withoutIds("no ledger node 'm_0f6c1234abcd9876'")).toBe("no ledger node");
    expect(withoutIds("m_0f6c1234abcd9876 is a system message")).toBe("this node is a system message");
    expect(withoutIds("this is the result of bash: drop the whole step")).toBe(
      "this is the result of bash: drop the whole step",
    );
  });
});

describe("wire and turns views", () => {
  it("lists what is sent on the wire with a JSON payload per item", () => {
    const roots = wireNodes({
      view: "wire",
      messages: [{ role: "user", content: "hello   world" }],
      tools: [{ name: "bash", description: "run" }],
    });
    expect(roots.map((root) => root.label)).toEqual(["Tools", "Messages"]);
    expect(roots[1]?.children?.[0]).toMatchObject({ label: "1. user", description: "hello world" });
    expect(roots[1]?.children?.[0]?.action).toMatchObject({ kind: "blob", language: "json" });
  });

  it("shows per-turn usage and its events", () => {
    const roots = turnNodes({
      view: "turns",
      turns: [
        {
          turn: 1,
          inputTokens: 9000,
          outputTokens: 300,
          cachedTokens: 8000,
          estimatedTokens: 9100,
          events: [{ kind: "gc", detail: "2 stubs", tokensBefore: 9000, tokensAfter: 6000 }],
        },
      ],
    });
    expect(roots[0]).toMatchObject({ label: "Turn 1", description: "in 9k · out 300 · cached 8k · est 9.1k" });
    expect(roots[0]?.children?.[0]).toMatchObject({ label: "gc", description: "9k → 6k · 2 stubs" });
  });

  it("cycles ledger → wire → turns → ledger", () => {
    expect(nextView("ledger")).toBe("wire");
    expect(nextView("wire")).toBe("turns");
    expect(nextView("turns")).toBe("ledger");
  });
  it("explains the usable total, with the calibration that shrank it", () => {
    const totals = {
      window: 97000,
      usable: 84900,
      used: 42000,
      percent: 49.5,
      reserve: 12100,
      billedInput: 40000,
      cachedInput: 0,
      calibrationFactor: 1.32,
      confidence: "high" as const,
    };
    const text = usableExplanation(totals);
    expect(text).toContain("84.9k usable** = window 97k − 12.1k kept free for the reply");
    expect(text).toContain("×1.32");
    expect(text).toContain("can move between turns");
    expect(usableExplanation({ ...totals, calibrationFactor: 1 })).toContain("No calibration yet");
  });
});
