/** The memory TreeView: user and project entries of this workspace. */
import * as vscode from "vscode";
import type { Rpc } from "../rpc/rpc";
import { ModelTreeProvider } from "../tree/modelTreeProvider";
import type { TreeNode } from "../tree/node";
import { errorText } from "../util/format";
import { memoryNodes } from "./memoryModel";

export const MEMORY_VIEW_ID = "bonsai.memory";

export class MemoryProvider implements vscode.Disposable {
  readonly tree = new ModelTreeProvider();
  readonly view: vscode.TreeView<TreeNode>;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly rpc: Rpc,
    readonly workspace: string,
  ) {
    this.view = vscode.window.createTreeView(MEMORY_VIEW_ID, { treeDataProvider: this.tree });
    this.disposables.push(
      this.view,
      this.tree,
      rpc.onNotification("bonsai/config/changed", () => void this.refresh()),
      rpc.onDidChangeState((state) => state.kind === "running" && void this.refresh()),
      this.view.onDidChangeVisibility((event) => event.visible && void this.refresh()),
    );
  }

  async refresh(): Promise<void> {
    if (this.rpc.state.kind !== "running") {
      this.tree.setRoots([]);
      this.view.message = "bonsai is not connected.";
      return;
    }
    try {
      const result = await this.rpc.request("bonsai/memory/list", { workspace: this.workspace });
      const notes = [...(result.issues ?? []), ...(result.advisory ? [result.advisory] : [])];
      this.view.message = notes.length > 0 ? notes.join(" · ") : undefined;
      this.tree.setRoots(memoryNodes(result.entries));
    } catch (error) {
      this.view.message = `Could not load memory: ${errorText(error)}`;
    }
  }

  dispose(): void {
    this.disposables.forEach((item) => item.dispose());
  }
}
