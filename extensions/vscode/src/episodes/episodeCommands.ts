/** Episode item commands: recall into the chat, restore an archived episode. */
import * as vscode from "vscode";
import type { ChatController } from "../chat/chatController";
import { formatRecall } from "../chat/slashFormat";
import type { Rpc } from "../rpc/rpc";
import type { TreeNode } from "../tree/node";
import { errorText } from "../util/format";
import type { EpisodesProvider } from "./episodesProvider";

function target(
  node: TreeNode | undefined,
  episodes: EpisodesProvider,
): { sessionId: string; number: number } | undefined {
  const data = (node ?? episodes.view.selection[0])?.data;
  if (typeof data?.sessionId !== "string" || typeof data.number !== "number") {
    void vscode.window.showWarningMessage("bonsai: select an episode first.");
    return undefined;
  }
  return { sessionId: data.sessionId, number: data.number };
}

export function registerEpisodeCommands(
  rpc: Rpc,
  episodes: EpisodesProvider,
  chat: ChatController,
): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand("bonsai.episodes.refresh", () => episodes.refresh()),
    vscode.commands.registerCommand("bonsai.episodes.recall", async (node?: TreeNode) => {
      const ref = target(node, episodes);
      if (ref === undefined) {
        return;
      }
      try {
        const { results } = await rpc.request("bonsai/episodes/recall", {
          sessionId: ref.sessionId,
          episode: ref.number,
        });
        chat.notice("info", formatRecall(ref.number, results));
        await vscode.commands.executeCommand("bonsai.chat.focus");
      } catch (error) {
        void vscode.window.showErrorMessage(`bonsai: recall failed: ${errorText(error)}`);
      }
    }),
    vscode.commands.registerCommand("bonsai.episodes.restore", async (node?: TreeNode) => {
      const ref = target(node, episodes);
      if (ref === undefined) {
        return;
      }
      try {
        await rpc.request("bonsai/episodes/restore", ref);
      } catch (error) {
        void vscode.window.showErrorMessage(`bonsai: restore failed: ${errorText(error)}`);
      }
      await episodes.refresh();
    }),
  ];
}
