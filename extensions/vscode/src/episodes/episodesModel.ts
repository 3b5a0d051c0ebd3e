/** Episode ledger → tree nodes. Pure. */
import type { EpisodeInfo } from "../protocol.generated";
import type { NodeIcon, TreeNode } from "../tree/node";
import { formatTokens } from "../util/format";

const ICONS: Record<EpisodeInfo["state"], NodeIcon> = {
  open: { id: "circle-large-outline", color: "charts.green" },
  closed: { id: "pass", color: "charts.blue" },
  archived: { id: "archive", color: "charts.orange" },
  restored: { id: "history", color: "charts.purple" },
};

export function episodeNodes(sessionId: string, episodes: readonly EpisodeInfo[]): TreeNode[] {
  return [...episodes]
    .sort((a, b) => a.number - b.number)
    .map((episode) => ({
      id: `episode:${episode.number}`,
      label: `#${episode.number} ${episode.title || "untitled"}`,
      description: `${episode.state} · ${episodeTokens(episode)}`,
      tooltip: `Episode #${episode.number}: ${episode.title}\n\nstate: ${episode.state}\n\ntokens: ${episodeTokens(episode)}`,
      icon: ICONS[episode.state],
      contextValue: `episode.${episode.state}`,
      data: { sessionId, number: episode.number },
    }));
}

/** "12k" for a live episode, "12k → 900" once archived. */
export function episodeTokens(episode: EpisodeInfo): string {
  const before = formatTokens(episode.tokensBefore ?? 0);
  if (episode.state === "archived") {
    return `${before} → ${formatTokens(episode.tokensAfter ?? 0)} tok`;
  }
  return `${before} tok`;
}
