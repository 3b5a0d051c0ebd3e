import { describe, expect, it } from "vitest";
import { formatCompact, formatCtx, formatEpisodes, formatMemory, formatRecall } from "../../src/chat/slashFormat";

describe("slash replies", () => {
  it("summarises the ledger with its largest nodes", () => {
    const text = formatCtx({
      view: "ledger",
      totals: {
        window: 128_000,
        usable: 112_000,
        used: 47_000,
        percent: 42,
        reserve: 16_000,
        billedInput: 0,
        cachedInput: 0,
      },
      nodes: [
        {
          id: "a",
          kind: "tool",
          section: "messages",
          label: "read a|b.py",
          tokens: 9000,
          confidence: "high",
          state: "full",
        },
        {
          id: "b",
          kind: "system",
          section: "system",
          label: "persona",
          tokens: 800,
          confidence: "exact",
          state: "pinned",
        },
      ],
    });
    expect(text).toContain("**Context** 42% of 112k usable (47k used");
    expect(text.indexOf("read a\\|b.py")).toBeLessThan(text.indexOf("persona"));
  });

  it("reports compaction savings and events", () => {
    const text = formatCompact({
      preview: true,
      before: 80_000,
      after: 40_000,
      events: [{ kind: "stub", detail: "3 reads" }],
    });
    expect(text).toBe("**Compaction preview:** 80k → 40k tokens (−40k)\n- stub: 3 reads");
    expect(formatCompact({ preview: false, before: 10, after: 10, events: [] })).toContain("nothing to do");
  });

  it("tabulates episodes and memory", () => {
    expect(formatEpisodes([])).toBe("**Episodes:** none yet.");
    expect(
      formatEpisodes([{ number: 1, title: "explore", state: "archived", tokensBefore: 12_000, tokensAfter: 900 }]),
    ).toContain("| #1 | explore | archived | 12k → 900 |");
    const memory = formatMemory(
      [{ name: "x", tier: "user", type: "preference", description: "d", path: "/p", enabled: false }],
      ["bad frontmatter in y.md"],
    );
    expect(memory).toContain("| ~~x~~ | user | preference | d |");
    expect(memory).toContain("- ⚠ bad frontmatter in y.md");
  });

  it("lists recalled messages", () => {
    expect(formatRecall(3, [])).toBe("**Recalled episode #3**: nothing found.");
    expect(formatRecall(undefined, [{ messageId: "m", role: "tool", score: 1, snippet: "", text: "full text" }])).toBe(
      "**Recall**\n\n- **tool**: full text",
    );
  });
});
