/** Conversation tree commands: refresh, and "move there" (apply the attachment suggestion). */
import * as vscode from "vscode";
import type { Rpc } from "../rpc/rpc";
import type { TreeNode } from "../tree/node";
import { errorText } from "../util/format";
import type { ConversationProvider } from "./conversationProvider";

export function registerConversationCommands(rpc: Rpc, view: ConversationProvider): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand("bonsai.conversation.refresh", () => view.refresh()),
    vscode.commands.registerCommand("bonsai.conversation.moveThere", async (node?: TreeNode) => {
      const data = (node ?? view.view.selection[0])?.data;
      if (typeof data?.sessionId !== "string" || typeof data.nodeId !== "string" || !("target" in data)) {
        void vscode.window.showWarningMessage("bonsai: select a question with a suggestion first.");
        return;
      }
      const target = typeof data.target === "string" && data.target !== "" ? data.target : undefined;
      try {
        await rpc.request("bonsai/tree/attach", {
          sessionId: data.sessionId,
          nodeId: data.nodeId,
          ...(target === undefined ? {} : { parentId: target }),
        });
      } catch (error) {
        void vscode.window.showErrorMessage(`bonsai: could not move the question: ${errorText(error)}`);
      }
    }),
  ];
}
