import { describe, expect, it } from "vitest";
import { chipView, compactTriggerPercent, fillBar, isNearCompaction } from "../../src/status/chip";

const running = { kind: "running", version: "0.1.0" } as const;

describe("status chip", () => {
  it.each([
    [0, "▱▱▱▱▱"],
    [42, "▰▰▱▱▱"],
    [50, "▰▰▰▱▱"],
    [100, "▰▰▰▰▰"],
    [180, "▰▰▰▰▰"],
    [-3, "▱▱▱▱▱"],
  ])("fills %d%% as %s", (percent, bar) => {
    expect(fillBar(percent)).toBe(bar);
  });

  it("shows the fill bar and percent, opening the ledger on click", () => {
    expect(chipView(running, 42.4, 95)).toEqual({
      text: "$(pie-chart) ▰▰▱▱▱ 42%",
      tooltip: expect.stringContaining("42% of the usable window"),
      command: "bonsai.ctx.open",
    });
  });

  it("turns to the warning colour near the compaction threshold", () => {
    expect(isNearCompaction(85, 95)).toBe(false);
    expect(isNearCompaction(86, 95)).toBe(true);
    expect(chipView(running, 90, 95).background).toBe("statusBarItem.warningBackground");
    expect(chipView(running, 46, 50).background).toBe("statusBarItem.warningBackground");
  });

  it("says when the daemon is unreachable and offers a restart", () => {
    const view = chipView({ kind: "failed", reason: "the bonsai executable was not found" }, undefined, 95);
    expect(view).toMatchObject({
      text: "$(error) bonsai",
      command: "bonsai.restart",
      background: "statusBarItem.errorBackground",
    });
    expect(view.tooltip).toContain("not found");
  });

  it("reads the compaction trigger from the effective settings", () => {
    expect(compactTriggerPercent({ context: { compact_trigger: 0.5 } })).toBe(50);
    expect(compactTriggerPercent({})).toBe(95);
  });
});
