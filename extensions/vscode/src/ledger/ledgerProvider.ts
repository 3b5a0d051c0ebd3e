/** The context ledger TreeView: fetches bonsai/ctx/get for this window's session. */
import * as vscode from "vscode";
import type { Rpc } from "../rpc/rpc";
import type { Sessions } from "../session/sessions";
import { ModelTreeProvider } from "../tree/modelTreeProvider";
import type { TreeNode } from "../tree/node";
import { errorText } from "../util/format";
import { type LedgerView, headerMessage, ledgerNodes, nextView, turnNodes, wireNodes } from "./ledgerModel";

export const LEDGER_VIEW_ID = "bonsai.ledger";
const REFRESH_DELAY_MS = 150;

export class LedgerProvider implements vscode.Disposable {
  readonly tree = new ModelTreeProvider();
  readonly view: vscode.TreeView<TreeNode>;
  private mode: LedgerView = "ledger";
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly rpc: Rpc,
    private readonly sessions: Sessions,
  ) {
    this.view = vscode.window.createTreeView(LEDGER_VIEW_ID, { treeDataProvider: this.tree, showCollapseAll: true });
    this.view.description = this.mode;
    this.disposables.push(
      this.view,
      this.tree,
      rpc.onNotification("bonsai/ctx/changed", (event) => {
        if (event.sessionId === sessions.sessionId) {
          this.scheduleRefresh();
        }
      }),
      sessions.onDidChange(() => this.scheduleRefresh()),
      rpc.onDidChangeState((state) => state.kind === "running" && this.scheduleRefresh()),
    );
  }

  get currentMode(): LedgerView {
    return this.mode;
  }

  async toggleMode(): Promise<void> {
    this.mode = nextView(this.mode);
    this.view.description = this.mode;
    await this.refresh();
  }

  scheduleRefresh(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.refresh(), REFRESH_DELAY_MS);
  }

  async refresh(): Promise<void> {
    const sessionId = this.sessions.sessionId;
    if (sessionId === undefined || this.rpc.state.kind !== "running") {
      this.tree.setRoots([]);
      this.view.message =
        sessionId === undefined ? "No session yet: send a message in the chat." : "bonsai is not connected.";
      return;
    }
    try {
      const result = await this.rpc.request("bonsai/ctx/get", { sessionId, view: this.mode });
      const roots =
        this.mode === "ledger"
          ? ledgerNodes(sessionId, result)
          : this.mode === "wire"
            ? wireNodes(result)
            : turnNodes(result);
      this.view.message = roots.length === 0 ? `The ${this.mode} view is empty.` : headerMessage(result.totals);
      this.tree.setRoots(roots);
    } catch (error) {
      this.view.message = `Could not load the context: ${errorText(error)}`;
    }
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.disposables.forEach((item) => item.dispose());
  }
}
