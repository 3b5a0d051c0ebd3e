/** The rules TreeView: this workspace's standing instructions for the agent. */
import * as vscode from "vscode";
import type { Rpc } from "../rpc/rpc";
import { ModelTreeProvider } from "../tree/modelTreeProvider";
import type { TreeNode } from "../tree/node";
import { errorText } from "../util/format";
import { ruleNodes, rulesMessage } from "./rulesModel";

export const RULES_VIEW_ID = "bonsai.rules";

export class RulesProvider implements vscode.Disposable {
  readonly tree = new ModelTreeProvider();
  readonly view: vscode.TreeView<TreeNode>;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly rpc: Rpc,
    readonly workspace: string,
  ) {
    this.view = vscode.window.createTreeView(RULES_VIEW_ID, { treeDataProvider: this.tree });
    this.disposables.push(
      this.view,
      this.tree,
      rpc.onNotification("bonsai/rules/changed", () => void this.refresh()),
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
      const result = await this.rpc.request("bonsai/rules/list", { workspace: this.workspace });
      this.view.message = rulesMessage(result.rules);
      this.tree.setRoots(ruleNodes(result.rules));
    } catch (error) {
      this.view.message = `Could not load rules: ${errorText(error)}`;
    }
  }

  dispose(): void {
    this.disposables.forEach((item) => item.dispose());
  }
}
