/** A TreeDataProvider over TreeNode values: the feature providers compute nodes, this renders them. */
import * as vscode from "vscode";
import type { TreeNode } from "./node";

export const SELECT_COMMAND = "bonsai.tree.select";

export class ModelTreeProvider implements vscode.TreeDataProvider<TreeNode> {
  private roots: TreeNode[] = [];
  private readonly parents = new Map<string, TreeNode>();
  private readonly changed = new vscode.EventEmitter<TreeNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  /** Show new nodes; identical data does not redraw (no flicker, no lost hover or menu). */
  setRoots(roots: TreeNode[]): void {
    if (JSON.stringify(roots) === JSON.stringify(this.roots)) {
      return;
    }
    this.roots = roots;
    this.parents.clear();
    const visit = (node: TreeNode): void => {
      for (const child of node.children ?? []) {
        this.parents.set(child.id, node);
        visit(child);
      }
    };
    roots.forEach(visit);
    this.changed.fire(undefined);
  }

  get rootNodes(): readonly TreeNode[] {
    return this.roots;
  }

  getChildren(element?: TreeNode): TreeNode[] {
    return element === undefined ? this.roots : (element.children ?? []);
  }

  getParent(element: TreeNode): TreeNode | undefined {
    return this.parents.get(element.id);
  }

  getTreeItem(node: TreeNode): vscode.TreeItem {
    const state =
      node.children === undefined || node.children.length === 0
        ? vscode.TreeItemCollapsibleState.None
        : node.expanded
          ? vscode.TreeItemCollapsibleState.Expanded
          : vscode.TreeItemCollapsibleState.Collapsed;
    const item = new vscode.TreeItem(node.label, state);
    item.id = node.id;
    item.description = node.description;
    item.tooltip = node.tooltip === undefined ? undefined : new vscode.MarkdownString(node.tooltip);
    item.contextValue = node.contextValue;
    if (node.icon !== undefined) {
      const color = node.icon.color === undefined ? undefined : new vscode.ThemeColor(node.icon.color);
      item.iconPath = new vscode.ThemeIcon(node.icon.id, color);
    }
    if (node.action !== undefined) {
      item.command = { command: SELECT_COMMAND, title: "Show", arguments: [node] };
    }
    return item;
  }

  dispose(): void {
    this.changed.dispose();
  }
}
