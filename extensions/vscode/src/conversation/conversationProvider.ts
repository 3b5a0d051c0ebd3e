/** The conversation tree view: refreshed on bonsai/tree/changed and on new messages. */
import * as vscode from "vscode";
import type { Rpc } from "../rpc/rpc";
import type { Sessions } from "../session/sessions";
import { ModelTreeProvider } from "../tree/modelTreeProvider";
import type { TreeNode } from "../tree/node";
import { errorText } from "../util/format";
import { conversationNodes } from "./conversationModel";

export const CONVERSATION_VIEW_ID = "bonsai.conversation";

export class ConversationProvider implements vscode.Disposable {
  readonly tree = new ModelTreeProvider();
  readonly view: vscode.TreeView<TreeNode>;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly rpc: Rpc,
    private readonly sessions: Sessions,
  ) {
    this.view = vscode.window.createTreeView(CONVERSATION_VIEW_ID, { treeDataProvider: this.tree });
    const mine = (event: { sessionId: string }): boolean => event.sessionId === sessions.sessionId;
    this.disposables.push(
      this.view,
      this.tree,
      rpc.onNotification("bonsai/tree/changed", (event) => mine(event) && this.scheduleRefresh()),
      rpc.onNotification("bonsai/session/event", (event) => mine(event) && this.scheduleRefresh()),
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
      const tree = await this.rpc.request("bonsai/tree/get", { sessionId });
      this.view.message = tree.nodes.length === 0 ? "No messages yet." : undefined;
      this.tree.setRoots(conversationNodes(sessionId, tree));
    } catch (error) {
      this.view.message = `Could not load the conversation tree: ${errorText(error)}`;
    }
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.disposables.forEach((item) => item.dispose());
  }
}
