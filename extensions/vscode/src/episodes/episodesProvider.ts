/** The episode list TreeView for this window's session. */
import * as vscode from "vscode";
import type { Rpc } from "../rpc/rpc";
import type { Sessions } from "../session/sessions";
import { ModelTreeProvider } from "../tree/modelTreeProvider";
import type { TreeNode } from "../tree/node";
import { errorText } from "../util/format";
import { episodeNodes } from "./episodesModel";

export const EPISODES_VIEW_ID = "bonsai.episodes";

export class EpisodesProvider implements vscode.Disposable {
  readonly tree = new ModelTreeProvider();
  readonly view: vscode.TreeView<TreeNode>;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly rpc: Rpc,
    private readonly sessions: Sessions,
  ) {
    this.view = vscode.window.createTreeView(EPISODES_VIEW_ID, { treeDataProvider: this.tree });
    this.disposables.push(
      this.view,
      this.tree,
      rpc.onNotification(
        "bonsai/ctx/changed",
        (event) => event.sessionId === sessions.sessionId && this.scheduleRefresh(),
      ),
      sessions.onDidChange(() => this.scheduleRefresh()),
      rpc.onDidChangeState((state) => state.kind === "running" && this.scheduleRefresh()),
    );
  }

  scheduleRefresh(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.refresh(), 200);
  }

  async refresh(): Promise<void> {
    const sessionId = this.sessions.sessionId;
    if (sessionId === undefined || this.rpc.state.kind !== "running") {
      this.tree.setRoots([]);
      this.view.message = sessionId === undefined ? "No session yet." : "bonsai is not connected.";
      return;
    }
    try {
      const { episodes } = await this.rpc.request("bonsai/episodes/list", { sessionId });
      this.view.message = episodes.length === 0 ? "No episodes yet: they start with the first task." : undefined;
      this.tree.setRoots(episodeNodes(sessionId, episodes));
    } catch (error) {
      this.view.message = `Could not load episodes: ${errorText(error)}`;
    }
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.disposables.forEach((item) => item.dispose());
  }
}
