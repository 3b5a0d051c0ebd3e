/**
 * Read-only virtual documents (`bonsai-ctx:`) for node text and wire payloads,
 * and the command that opens them when a tree row is selected.
 */
import * as vscode from "vscode";
import type { Rpc } from "../rpc/rpc";
import type { NodeAction, TreeNode } from "../tree/node";
import { SELECT_COMMAND } from "../tree/modelTreeProvider";
import { errorText } from "../util/format";

export const CTX_SCHEME = "bonsai-ctx";

interface NodeQuery {
  sessionId?: string;
  nodeId?: string;
  blob?: string;
}

export class CtxDocuments implements vscode.TextDocumentContentProvider {
  private readonly blobs = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  constructor(private readonly rpc: Rpc) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const query = parseQuery(uri.query);
    if (query.blob !== undefined) {
      return this.blobs.get(query.blob) ?? "(this payload is no longer available: refresh the view)";
    }
    if (query.sessionId === undefined || query.nodeId === undefined) {
      return `(not a bonsai context document: ${uri.toString()})`;
    }
    try {
      const { text } = await this.rpc.request("bonsai/ctx/text", { sessionId: query.sessionId, nodeId: query.nodeId });
      return text;
    } catch (error) {
      return `(could not load this node: ${errorText(error)})`;
    }
  }

  uriFor(action: NodeAction): vscode.Uri {
    switch (action.kind) {
      case "ctxText":
        return vscode.Uri.from({
          scheme: CTX_SCHEME,
          path: `/${safeName(action.label)}.md`,
          query: JSON.stringify({ sessionId: action.sessionId, nodeId: action.nodeId }),
        });
      case "blob":
        this.blobs.set(action.name, action.text);
        return vscode.Uri.from({
          scheme: CTX_SCHEME,
          path: `/${action.name}`,
          query: JSON.stringify({ blob: action.name }),
        });
      case "openFile":
        return vscode.Uri.file(action.path);
    }
  }

  /** Re-read an open node document (after pin/stub/restore changed it). */
  refresh(uri: vscode.Uri): void {
    this.changed.fire(uri);
  }

  dispose(): void {
    this.changed.dispose();
  }
}

export function registerSelectCommand(documents: CtxDocuments): vscode.Disposable {
  return vscode.commands.registerCommand(SELECT_COMMAND, async (node: TreeNode) => {
    if (node.action === undefined) {
      return;
    }
    const uri = documents.uriFor(node.action);
    documents.refresh(uri);
    const document = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(document, { preview: true, preserveFocus: true });
  });
}

function parseQuery(query: string): NodeQuery {
  try {
    const value: unknown = JSON.parse(query);
    return typeof value === "object" && value !== null ? (value as NodeQuery) : {};
  } catch {
    return {};
  }
}

function safeName(label: string): string {
  return (
    label
      .replace(/[^\w.-]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 60) || "node"
  );
}
