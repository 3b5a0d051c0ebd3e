/** Context ledger results → tree nodes, for the ledger, wire and turns views. Pure. */
import type { CtxEvent, CtxGetResult, CtxNode, CtxTotals, CtxTurn } from "../protocol.generated";
import type { NodeIcon, TreeNode } from "../tree/node";
import { formatTokens, preview } from "../util/format";

export type LedgerView = "ledger" | "wire" | "turns";
export const LEDGER_VIEWS: readonly LedgerView[] = ["ledger", "wire", "turns"];

type Section = CtxNode["section"];
type State = CtxNode["state"];

const SECTIONS: readonly { section: Section; title: string; icon: string }[] = [
  { section: "system", title: "System", icon: "gear" },
  { section: "tools", title: "Tools", icon: "tools" },
  { section: "messages", title: "Messages", icon: "comment-discussion" },
  { section: "stubs", title: "Stubs", icon: "fold" },
  { section: "summaries", title: "Summaries", icon: "note" },
  { section: "episodes", title: "Episodes", icon: "archive" },
];

const STATE_ICONS: Record<State, NodeIcon> = {
  full: { id: "circle-filled", color: "charts.green" },
  pinned: { id: "pinned", color: "charts.blue" },
  stubbed: { id: "fold-up", color: "charts.yellow" },
  dropped: { id: "circle-slash", color: "disabledForeground" },
  summarized: { id: "note", color: "charts.purple" },
  archived: { id: "archive", color: "charts.orange" },
};

export function nextView(view: LedgerView): LedgerView {
  return LEDGER_VIEWS[(LEDGER_VIEWS.indexOf(view) + 1) % LEDGER_VIEWS.length] ?? "ledger";
}

export function stateIcon(state: State): NodeIcon {
  return STATE_ICONS[state];
}

/** The ledger view: the header rows (totals, window, notes), then one section per kind of context. */
export function ledgerNodes(sessionId: string, result: CtxGetResult): TreeNode[] {
  const nodes = result.nodes ?? [];
  const heads = new Set(nodes.flatMap((node) => (node.step ? [node.step] : [])));
  const roots: TreeNode[] = result.totals ? headerNodes(result.totals) : [];
  for (const { section, title, icon } of SECTIONS) {
    const members = nodes.filter((node) => node.section === section);
    if (members.length === 0) {
      continue;
    }
    const tokens = members.reduce((sum, node) => sum + (node.state === "dropped" ? 0 : node.tokens), 0);
    roots.push({
      id: `section:${section}`,
      label: title,
      description: `${members.length} · ${formatTokens(tokens)} tok`,
      icon: { id: icon },
      expanded: section === "messages",
      children: members.map((node) => ctxNode(sessionId, node, heads)),
    });
  }
  return roots;
}

/**
 * One node row. `heads` are the ids of the assistant messages that made tool
 * calls: a call and its results form a step, which can be dropped as a whole
 * (a result alone cannot), so their rows get ".step" in their context value.
 */
export function ctxNode(sessionId: string, node: CtxNode, heads: ReadonlySet<string> = new Set()): TreeNode {
  const step = node.step ?? (heads.has(node.id) ? node.id : undefined);
  const approx = node.confidence === "low" ? "~" : "";
  const lines = [
    `**${node.label}**`,
    "",
    `${node.kind} · ${node.state} · ${approx}${node.tokens} tokens (${node.confidence} confidence)`,
  ];
  if (node.turn != null) {
    lines.push(`turn ${node.turn}`);
  }
  if (node.reason) {
    lines.push(`reason: ${node.reason}`);
  }
  return {
    id: `node:${node.id}`,
    label: node.label,
    description: `${approx}${formatTokens(node.tokens)} · ${node.state}`,
    tooltip: lines.join("\n\n"),
    icon: stateIcon(node.state),
    contextValue: `ctxNode.${node.state}${step ? ".step" : ""}`,
    action: { kind: "ctxText", sessionId, nodeId: node.id, label: node.label },
    data: { sessionId, nodeId: node.id, state: node.state, ...(step ? { step } : {}) },
  };
}

/** Why the usable total is what it is (it moves as the token calibration learns). */
export function usableExplanation(totals: CtxTotals): string {
  const factor = totals.calibrationFactor ?? 1;
  const base =
    `**${formatTokens(totals.usable)} usable** = window ${formatTokens(totals.window)} − ` +
    `${formatTokens(totals.reserve)} kept free for the reply`;
  const calibrated =
    factor > 1
      ? `\n\nBoth are divided by the learned calibration **×${factor.toFixed(2)}**: the provider billed ` +
        `${factor.toFixed(2)} times what bonsai estimated for recent requests, so the budget shrinks by that ` +
        `factor (the model's own window is about ${formatTokens(Math.round(totals.window * factor))}). ` +
        "It changes as bonsai learns from each billed request, which is why this total can move between turns."
      : "\n\nNo calibration yet (or the provider bills what bonsai estimates): the window is the model's own.";
  return (
    `${base}.${calibrated}\n\nUsed ${formatTokens(totals.used)} (${totals.percent}%), ` +
    `estimates ${totals.confidence ?? "low"} confidence.`
  );
}

/** What the last request cost: bonsai's estimate, and what the server billed (when it said). */
export function billedText(totals: CtxTotals): string {
  const estimated = `estimated ${formatTokens(totals.estimatedInput ?? 0)}`;
  if (totals.billedReported === false) {
    return `${estimated} · billed: not reported by the server`;
  }
  return `${estimated} · billed ${formatTokens(totals.billedInput)} · cached ${formatTokens(totals.cachedInput)}`;
}

/**
 * The notes about the window and the server ("unknown window: set …", a server
 * that cannot call tools), for the view's message above the tree: shown in full
 * and wrapped, where a row would be cut at the side bar's width.
 */
export function headerMessage(totals: CtxTotals | null | undefined): string | undefined {
  const notes = totals?.windowNotes ?? [];
  return notes.length > 0 ? notes.map((note) => `⚠ ${note}`).join("\n") : undefined;
}

/** The header rows: the totals, and where the window figure came from. */
function headerNodes(totals: CtxTotals): TreeNode[] {
  const source = totals.windowSource ?? "";
  return [
    {
      id: "totals",
      label: `${totals.percent}% of ${formatTokens(totals.usable)} usable`,
      description: `${formatTokens(totals.used)} used · ${billedText(totals)}`,
      tooltip: usableExplanation(totals),
      icon: { id: "pie-chart" },
      contextValue: "ctxTotals",
    },
    {
      id: "window",
      label: `window ${formatTokens(totals.window)} · reserve ${formatTokens(totals.reserve)}`,
      ...(source ? { description: `from ${source}` } : {}),
      tooltip:
        `**Window ${totals.window.toLocaleString("en-US")} tokens**${source ? `, from ${source}` : ""}.\n\n` +
        `${totals.reserve.toLocaleString("en-US")} of them are kept free for the reply (every request's output limit).\n\n` +
        `Last request: ${billedText(totals)}.`,
      icon: { id: "symbol-ruler" },
      contextValue: "ctxWindow",
    },
  ];
}

/** The wire view: exactly what the provider is sent (system, tools, messages). */
export function wireNodes(result: CtxGetResult): TreeNode[] {
  const groups: [string, string, Record<string, unknown>[] | null | undefined][] = [
    ["system", "System", result.system],
    ["tools", "Tools", result.tools],
    ["messages", "Messages", result.messages],
  ];
  return groups
    .filter(([, , items]) => (items ?? []).length > 0)
    .map(([key, title, items]) => ({
      id: `wire:${key}`,
      label: title,
      description: `${(items ?? []).length}`,
      icon: { id: key === "tools" ? "tools" : key === "system" ? "gear" : "comment-discussion" },
      expanded: key === "messages",
      children: (items ?? []).map((item, index) => wireItem(key, item, index)),
    }));
}

function wireItem(group: string, item: Record<string, unknown>, index: number): TreeNode {
  const role = typeof item.role === "string" ? item.role : typeof item.name === "string" ? item.name : group;
  const text = wireText(item);
  const json = JSON.stringify(item, null, 2);
  return {
    id: `wire:${group}:${index}`,
    label: `${index + 1}. ${role}`,
    description: preview(text, 60),
    icon: { id: "symbol-string" },
    action: { kind: "blob", name: `wire-${group}-${index + 1}.json`, text: json, language: "json" },
  };
}

function wireText(item: Record<string, unknown>): string {
  if (typeof item.content === "string") {
    return item.content;
  }
  if (typeof item.description === "string") {
    return item.description;
  }
  return JSON.stringify(item.content ?? item);
}

/** The turns view: provider-reported usage per turn, with the context events of each. */
export function turnNodes(result: CtxGetResult): TreeNode[] {
  return (result.turns ?? []).map((turn) => turnNode(turn));
}

function turnNode(turn: CtxTurn): TreeNode {
  const events = turn.events ?? [];
  return {
    id: `turn:${turn.turn}`,
    label: `Turn ${turn.turn}`,
    description: `in ${formatTokens(turn.inputTokens)} · out ${formatTokens(turn.outputTokens)} · cached ${formatTokens(turn.cachedTokens)} · est ${formatTokens(turn.estimatedTokens)}`,
    icon: { id: "history" },
    children: events.map((event, index) => eventNode(turn.turn, event, index)),
  };
}

function eventNode(turn: number, event: CtxEvent, index: number): TreeNode {
  const delta =
    event.tokensBefore != null && event.tokensAfter != null
      ? `${formatTokens(event.tokensBefore)} → ${formatTokens(event.tokensAfter)}`
      : "";
  return {
    id: `turn:${turn}:event:${index}`,
    label: event.kind,
    description: [delta, event.detail ?? ""].filter(Boolean).join(" · "),
    tooltip: event.prefixHashBefore ? `prefix ${event.prefixHashBefore} → ${event.prefixHashAfter ?? "?"}` : undefined,
    icon: { id: "zap" },
  };
}
