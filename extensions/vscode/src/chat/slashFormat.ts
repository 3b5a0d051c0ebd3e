/** Markdown replies for the slash commands, from daemon results. Pure. */
import type {
  CtxCompactResult,
  CtxGetResult,
  EpisodeInfo,
  MemoryEntryInfo,
  RecallHit,
  SessionResetResult,
} from "../protocol.generated";
import { formatTokens, preview } from "../util/format";

export function formatCtx(result: CtxGetResult, top = 5): string {
  const totals = result.totals;
  const head = totals
    ? `**Context** ${totals.percent}% of ${formatTokens(totals.usable)} usable (${formatTokens(totals.used)} used, window ${formatTokens(totals.window)}, reserve ${formatTokens(totals.reserve)})`
    : "**Context** (no totals yet)";
  const nodes = [...(result.nodes ?? [])].sort((a, b) => b.tokens - a.tokens || a.id.localeCompare(b.id)).slice(0, top);
  if (nodes.length === 0) {
    return head;
  }
  const rows = nodes.map(
    (node) => `| ${cell(node.label)} | ${node.section} | ${node.state} | ${formatTokens(node.tokens)} |`,
  );
  return [head, "", "| largest | section | state | tokens |", "|---|---|---|---:|", ...rows].join("\n");
}

export function formatCompact(result: CtxCompactResult): string {
  const verb = result.preview ? "Compaction preview" : "Compacted";
  const saved = result.before - result.after;
  const lines = [
    `**${verb}:** ${formatTokens(result.before)} → ${formatTokens(result.after)} tokens (${saved >= 0 ? "−" : "+"}${formatTokens(Math.abs(saved))})`,
  ];
  for (const event of result.events) {
    lines.push(`- ${event.kind}${event.detail ? `: ${event.detail}` : ""}`);
  }
  if (result.events.length === 0) {
    lines.push("- nothing to do");
  }
  return lines.join("\n");
}

export function formatEpisodes(episodes: readonly EpisodeInfo[]): string {
  if (episodes.length === 0) {
    return "**Episodes:** none yet.";
  }
  const rows = episodes.map(
    (episode) =>
      `| #${episode.number} | ${cell(episode.title)} | ${episode.state} | ${formatTokens(episode.tokensBefore ?? 0)} → ${formatTokens(episode.tokensAfter ?? 0)} |`,
  );
  return ["**Episodes**", "", "| # | title | state | tokens |", "|---|---|---|---|", ...rows].join("\n");
}

export function formatMemory(entries: readonly MemoryEntryInfo[], issues: readonly string[] = []): string {
  const lines =
    entries.length === 0
      ? ["**Memory:** no entries. Add one with `/remember <fact>`."]
      : ["**Memory**", "", "| name | tier | type | description |", "|---|---|---|---|"];
  for (const entry of entries) {
    const name = entry.enabled === false ? `~~${cell(entry.name)}~~` : cell(entry.name);
    lines.push(`| ${name} | ${entry.tier} | ${cell(entry.type)} | ${cell(entry.description)} |`);
  }
  for (const issue of issues) {
    lines.push(`- ⚠ ${issue}`);
  }
  return lines.join("\n");
}

export function formatRecall(episode: number | undefined, hits: readonly RecallHit[]): string {
  const title = episode === undefined ? "**Recall**" : `**Recalled episode #${episode}**`;
  if (hits.length === 0) {
    return `${title}: nothing found.`;
  }
  return [title, "", ...hits.map((hit) => `- **${hit.role}**: ${preview(hit.snippet || hit.text, 200)}`)].join("\n");
}

/** Escape a value for a markdown table cell. */
function cell(text: string): string {
  return preview(text, 60).replace(/\|/g, "\\|");
}

/** The daemon's answer to a hard reset: which episode closed, or why nothing did. */
export function formatReset(result: SessionResetResult): string {
  return `**/${result.kind}**: ${result.message}`;
}
