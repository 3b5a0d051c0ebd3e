/** Item commands of the ledger: pin, unpin, drop, drop a whole step, stub, restore, compact. */
import * as vscode from "vscode";
import type { Rpc } from "../rpc/rpc";
import type { Sessions } from "../session/sessions";
import type { TreeNode } from "../tree/node";
import { errorText, withoutIds } from "../util/format";
import { LEDGER_VIEW_ID, type LedgerProvider } from "./ledgerProvider";

const NODE_ACTIONS = {
  "bonsai.ctx.pin": "bonsai/ctx/pin",
  "bonsai.ctx.unpin": "bonsai/ctx/unpin",
  "bonsai.ctx.drop": "bonsai/ctx/drop",
  "bonsai.ctx.stub": "bonsai/ctx/stub",
  "bonsai.ctx.restore": "bonsai/ctx/restore",
} as const;

export const DROP_STEP = "Drop the Whole Step";

interface Target {
  sessionId: string;
  nodeId: string;
  /** The step's head (the assistant message that made the calls), when the node is part of one. */
  step?: string;
}

function targetOf(ledger: LedgerProvider, node?: TreeNode): Target | undefined {
  const data = (node ?? ledger.view.selection[0])?.data;
  const { nodeId, sessionId, step } = data ?? {};
  if (typeof nodeId !== "string" || typeof sessionId !== "string") {
    void vscode.window.showWarningMessage("bonsai: select a context node in the ledger first.");
    return undefined;
  }
  return { sessionId, nodeId, ...(typeof step === "string" ? { step } : {}) };
}

export function registerCtxCommands(rpc: Rpc, sessions: Sessions, ledger: LedgerProvider): vscode.Disposable[] {
  /** Drop the call and all its results at once (dropping the head drops the group). */
  const dropStep = async (target: Target): Promise<void> => {
    if (target.step === undefined) {
      void vscode.window.showWarningMessage("bonsai: this node is not part of a tool step.");
      return;
    }
    try {
      await rpc.request("bonsai/ctx/drop", { sessionId: target.sessionId, nodeId: target.step });
    } catch (error) {
      void vscode.window.showErrorMessage(`bonsai: dropping the step failed: ${withoutIds(errorText(error))}`);
    }
    await ledger.refresh();
  };
  const nodeCommands = Object.entries(NODE_ACTIONS).map(([command, method]) =>
    vscode.commands.registerCommand(command, async (node?: TreeNode) => {
      const target = targetOf(ledger, node);
      if (target === undefined) {
        return;
      }
      try {
        await rpc.request(method, { sessionId: target.sessionId, nodeId: target.nodeId });
      } catch (error) {
        const message = `bonsai: ${command.split(".").pop()} failed: ${withoutIds(errorText(error))}`;
        // A tool result alone cannot go (its call would lose its answer): offer the step.
        const offer = method === "bonsai/ctx/drop" && target.step !== undefined && target.step !== target.nodeId;
        const choice = await (offer
          ? vscode.window.showErrorMessage(message, DROP_STEP)
          : vscode.window.showErrorMessage(message));
        if (choice === DROP_STEP) {
          await dropStep(target);
          return;
        }
      }
      await ledger.refresh();
    }),
  );
  return [
    ...nodeCommands,
    vscode.commands.registerCommand("bonsai.ctx.dropStep", async (node?: TreeNode) => {
      const target = targetOf(ledger, node);
      if (target !== undefined) {
        await dropStep(target);
      }
    }),
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
