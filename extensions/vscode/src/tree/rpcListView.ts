/** A TreeView filled from one daemon request, refreshed when the daemon says so. */
import * as vscode from "vscode";
import type { Rpc } from "../rpc/rpc";
import { errorText } from "../util/format";
import { ModelTreeProvider } from "./modelTreeProvider";
import type { TreeNode } from "./node";

export interface ListContent {
  roots: TreeNode[];
  message?: string;
}

export abstract class RpcListView implements vscode.Disposable {
  readonly tree = new ModelTreeProvider();
  readonly view: vscode.TreeView<TreeNode>;
  protected readonly disposables: vscode.Disposable[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    viewId: string,
    protected readonly rpc: Rpc,
    private readonly what: string,
  ) {
    this.view = vscode.window.createTreeView(viewId, { treeDataProvider: this.tree });
    this.disposables.push(
      this.view,
      this.tree,
      rpc.onDidChangeState((state) => state.kind === "running" && this.scheduleRefresh()),
    );
  }

  /** The rows to show, asked of the daemon. */
  protected abstract load(): Promise<ListContent>;

  /** Why there is nothing to ask for yet (e.g. no session), or undefined. */
  protected waitingFor(): string | undefined {
    return undefined;
  }

  /** Coalesce bursts of notifications into one request. */
  scheduleRefresh(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.refresh(), 200);
  }

  async refresh(): Promise<void> {
    const waiting = this.waitingFor() ?? (this.rpc.state.kind !== "running" ? "bonsai is not connected." : undefined);
    if (waiting !== undefined) {
      this.tree.setRoots([]);
      this.view.message = waiting;
      return;
    }
    try {
      const { roots, message } = await this.load();
      this.view.message = message;
      this.tree.setRoots(roots);
    } catch (error) {
      this.view.message = `Could not load ${this.what}: ${errorText(error)}`;
    }
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.disposables.forEach((item) => item.dispose());
  }
}
