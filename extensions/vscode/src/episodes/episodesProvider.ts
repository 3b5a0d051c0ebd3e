/** The episode list TreeView for this window's session. */
import type { Rpc } from "../rpc/rpc";
import type { Sessions } from "../session/sessions";
import { type ListContent, RpcListView } from "../tree/rpcListView";
import { episodeNodes } from "./episodesModel";

export const EPISODES_VIEW_ID = "bonsai.episodes";

export class EpisodesProvider extends RpcListView {
  constructor(
    rpc: Rpc,
    private readonly sessions: Sessions,
  ) {
    super(EPISODES_VIEW_ID, rpc, "episodes");
    this.disposables.push(
      rpc.onNotification(
        "bonsai/ctx/changed",
        (event) => event.sessionId === sessions.sessionId && this.scheduleRefresh(),
      ),
      sessions.onDidChange(() => this.scheduleRefresh()),
    );
  }

  protected override waitingFor(): string | undefined {
    return this.sessions.sessionId === undefined ? "No session yet." : undefined;
  }

  protected async load(): Promise<ListContent> {
    const sessionId = this.sessions.sessionId as string;
    const { episodes } = await this.rpc.request("bonsai/episodes/list", { sessionId });
    const message = episodes.length === 0 ? "No episodes yet: they start with the first task." : undefined;
    return { roots: episodeNodes(sessionId, episodes), message };
  }
}
