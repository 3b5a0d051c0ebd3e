/** The status bar chip's text and colour, from the window fill. Pure. */
import type { ConnectionState } from "../rpc/rpc";

const CELLS = 5;

/** `▰▰▱▱▱` for 42%: each cell is a fifth of the usable window, rounded. */
export function fillBar(percent: number): string {
  const clamped = Math.min(100, Math.max(0, percent));
  const full = Math.round((clamped / 100) * CELLS);
  return "▰".repeat(full) + "▱".repeat(CELLS - full);
}

export interface ChipView {
  text: string;
  tooltip: string;
  /** A theme colour id for the background, or undefined for the default. */
  background?: "statusBarItem.warningBackground" | "statusBarItem.errorBackground";
  command: string;
}

/** Warn from 90% of the compaction trigger on (e.g. 85.5% when compaction starts at 95%). */
export function isNearCompaction(percent: number, compactAtPercent: number): boolean {
  return percent >= compactAtPercent * 0.9;
}

export function chipView(state: ConnectionState, percent: number | undefined, compactAtPercent: number): ChipView {
  if (state.kind === "starting") {
    return { text: "$(sync~spin) bonsai", tooltip: "Connecting to the bonsai daemon…", command: "bonsai.showOutput" };
  }
  if (state.kind !== "running") {
    return {
      text: "$(error) bonsai",
      tooltip: `bonsai is not connected: ${state.reason}\n\nClick to restart.`,
      background: "statusBarItem.errorBackground",
      command: "bonsai.restart",
    };
  }
  if (percent === undefined) {
    return {
      text: `$(pie-chart) ${fillBar(0)} –`,
      tooltip: "bonsai: no session in this window yet",
      command: "bonsai.ctx.open",
    };
  }
  const shown = Math.round(percent);
  const near = isNearCompaction(percent, compactAtPercent);
  return {
    text: `$(pie-chart) ${fillBar(percent)} ${shown}%`,
    tooltip: `bonsai context: ${shown}% of the usable window (compaction at ${compactAtPercent}%). Click for the ledger.`,
    ...(near ? { background: "statusBarItem.warningBackground" as const } : {}),
    command: "bonsai.ctx.open",
  };
}

/** The compaction trigger in percent from `bonsai/config/get`'s effective settings. */
export function compactTriggerPercent(effective: Record<string, unknown>): number {
  const context = effective.context as { compact_trigger?: unknown } | undefined;
  const trigger = context?.compact_trigger;
  return typeof trigger === "number" && trigger > 0 ? Math.round(trigger * 1000) / 10 : 95;
}
