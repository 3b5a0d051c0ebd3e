/** The "window nearly full" nudge: offer a fresh session seeded with the daemon's handoff. */
import * as vscode from "vscode";
import type { HandoffSuggestedParams } from "../protocol.generated";
import type { Rpc } from "../rpc/rpc";
import type { Sessions } from "./sessions";
import { errorText } from "../util/format";

export function registerHandoff(rpc: Rpc, sessions: Sessions): vscode.Disposable {
  return rpc.onNotification("bonsai/handoff/suggested", (params) => void offer(rpc, sessions, params));
}

async function offer(rpc: Rpc, sessions: Sessions, params: HandoffSuggestedParams): Promise<void> {
  if (params.sessionId !== sessions.sessionId) {
    return;
  }
  const answer = await vscode.window.showWarningMessage(
    `bonsai: the context is ${Math.round(params.percent)}% full. Continue in a fresh session with a handoff summary?`,
    "Start fresh session",
  );
  if (answer !== "Start fresh session") {
    return;
  }
  try {
    const sessionId = await sessions.create();
    const client = sessions.client();
    await rpc.request("bonsai/chat/send", {
      sessionId,
      text: params.handoff,
      ...(client === undefined ? {} : { client }),
    });
  } catch (error) {
    void vscode.window.showErrorMessage(`bonsai: handoff failed: ${errorText(error)}`);
  }
}
