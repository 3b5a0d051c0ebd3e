/** Item commands of the ledger: pin, unpin, drop, stub, restore, compact. */
import * as vscode from "vscode";
import type { Rpc } from "../rpc/rpc";
import type { Sessions } from "../session/sessions";
import type { TreeNode } from "../tree/node";
import { errorText } from "../util/format";
import { LEDGER_VIEW_ID, type LedgerProvider } from "./ledgerProvider";

const NODE_ACTIONS = {
  "bonsai.ctx.pin": "bonsai/ctx/pin",
  "bonsai.ctx.unpin": "bonsai/ctx/unpin",
  "bonsai.ctx.drop": "bonsai/ctx/drop",
  "bonsai.ctx.stub": "bonsai/ctx/stub",
  "bonsai.ctx.restore": "bonsai/ctx/restore",
} as const;

export function registerCtxCommands(rpc: Rpc, sessions: Sessions, ledger: LedgerProvider): vscode.Disposable[] {
  const nodeCommands = Object.entries(NODE_ACTIONS).map(([command, method]) =>
    vscode.commands.registerCommand(command, async (node?: TreeNode) => {
      const target = node ?? ledger.view.selection[0];
      const nodeId = target?.data?.nodeId;
      const sessionId = target?.data?.sessionId;
      if (typeof nodeId !== "string" || typeof sessionId !== "string") {
        void vscode.window.showWarningMessage("bonsai: select a context node in the ledger first.");
        return;
      }
      try {
        await rpc.request(method, { sessionId, nodeId });
      } catch (error) {
        void vscode.window.showErrorMessage(`bonsai: ${command.split(".").pop()} failed: ${errorText(error)}`);
      }
      await ledger.refresh();
    }),
  );
  return [
    ...nodeCommands,
    vscode.commands.registerCommand("bonsai.ctx.refresh", () => ledger.refresh()),
    vscode.commands.registerCommand("bonsai.ctx.toggleView", () => ledger.toggleMode()),
    vscode.commands.registerCommand("bonsai.ctx.open", () => vscode.commands.executeCommand(`${LEDGER_VIEW_ID}.focus`)),
    vscode.commands.registerCommand("bonsai.ctx.compact", () => compact(rpc, sessions, false)),
    vscode.commands.registerCommand("bonsai.ctx.compactPreview", () => compact(rpc, sessions, true)),
  ];
}

async function compact(rpc: Rpc, sessions: Sessions, preview: boolean): Promise<void> {
  const sessionId = sessions.sessionId;
  if (sessionId === undefined) {
    void vscode.window.showWarningMessage("bonsai: no session in this window yet.");
    return;
  }
  try {
    const result = await rpc.request("bonsai/ctx/compact", { sessionId, preview });
    const verb = preview ? "would compact" : "compacted";
    void vscode.window.showInformationMessage(`bonsai ${verb} ${result.before} → ${result.after} tokens.`);
  } catch (error) {
    void vscode.window.showErrorMessage(`bonsai: compaction failed: ${errorText(error)}`);
  }
}
