/** autoReflect: a failed turn's retry offer, shown as a notification with two actions. */
import * as vscode from "vscode";
import type { ReflectOfferedParams } from "../protocol.generated";
import type { Rpc } from "../rpc/rpc";
import type { Sessions } from "../session/sessions";
import { errorText } from "../util/format";

export const RETRY = "Retry with reflection";
export const DISMISS = "Dismiss";

export function offerText(params: ReflectOfferedParams): string {
  const kind = params.grade.kind.replace("_", " ");
  const first = params.grade.evidence[params.grade.evidence.length - 1] ?? "";
  return `bonsai: the last turn failed (${kind}, ${params.grade.severity}): ${first}`;
}

export function registerReflectOffers(rpc: Rpc, sessions: Sessions): vscode.Disposable {
  return rpc.onNotification("bonsai/reflect/offered", (params) => void offer(rpc, sessions, params));
}

async function offer(rpc: Rpc, sessions: Sessions, params: ReflectOfferedParams): Promise<void> {
  if (params.sessionId !== sessions.sessionId || params.autoRetry) {
    return;
  }
  const answer = await vscode.window.showWarningMessage(offerText(params), RETRY, DISMISS);
  const ref = { sessionId: params.sessionId, offerId: params.offerId };
  try {
    if (answer === RETRY) {
      await rpc.request("bonsai/reflect/retry", ref);
    } else if (answer === DISMISS) {
      await rpc.request("bonsai/reflect/dismiss", ref);
    }
  } catch (error) {
    void vscode.window.showErrorMessage(`bonsai: ${errorText(error)}`);
  }
}
