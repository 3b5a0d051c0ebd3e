/** The status bar chip: window fill of this window's session, connection state. */
import * as vscode from "vscode";
import type { Rpc } from "../rpc/rpc";
import type { Sessions } from "../session/sessions";
import { errorText } from "../util/format";
import { chipView, compactTriggerPercent } from "./chip";

export class StatusChip implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("bonsai.context", vscode.StatusBarAlignment.Right, 100);
  private percent: number | undefined;
  private compactAt = 95;
  private problem: string | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly rpc: Rpc,
    private readonly sessions: Sessions,
  ) {
    this.item.name = "bonsai context";
    this.disposables.push(
      this.item,
      rpc.onDidChangeState((state) => {
        this.render();
        if (state.kind === "running") {
          void this.reload();
        }
      }),
      rpc.onNotification("bonsai/ctx/changed", (event) => {
        if (event.sessionId === sessions.sessionId) {
          this.percent = event.percent;
          this.render();
        }
      }),
      rpc.onNotification("bonsai/config/changed", () => void this.reload()),
      sessions.onDidChange(() => void this.reload()),
    );
    this.render();
    this.item.show();
  }

  /** Fetch thresholds and the current fill (after connect, session switch or config change). */
  async reload(): Promise<void> {
    if (this.rpc.state.kind !== "running") {
      return;
    }
    try {
      const config = await this.rpc.request("bonsai/config/get", { workspace: this.sessions.workspace });
      this.compactAt = compactTriggerPercent(config.effective);
      const sessionId = this.sessions.sessionId;
      this.percent = undefined;
      if (sessionId !== undefined) {
        const ledger = await this.rpc.request("bonsai/ctx/get", { sessionId, view: "ledger" });
        this.percent = ledger.totals?.percent;
      }
      this.problem = undefined;
    } catch (error) {
      this.problem = errorText(error);
    }
    this.render();
  }

  private render(): void {
    const view = chipView(this.rpc.state, this.percent, this.compactAt);
    this.item.text = view.text;
    this.item.tooltip =
      this.problem === undefined ? view.tooltip : `${view.tooltip}\n\nLast update failed: ${this.problem}`;
    this.item.command = view.command;
    this.item.backgroundColor = view.background === undefined ? undefined : new vscode.ThemeColor(view.background);
  }

  dispose(): void {
    this.disposables.forEach((item) => item.dispose());
  }
}
