/** Session commands: new, switch/attach (any workspace), rename, delete. */
import * as vscode from "vscode";
import type { Rpc } from "../rpc/rpc";
import type { Sessions } from "./sessions";
import { errorText } from "../util/format";

async function guarded(what: string, action: () => Promise<unknown>): Promise<void> {
  try {
    await action();
  } catch (error) {
    void vscode.window.showErrorMessage(`bonsai: ${what} failed: ${errorText(error)}`);
  }
}

async function pickSession(sessions: Sessions, placeHolder: string): Promise<string | undefined> {
  const options = await sessions.list();
  const picked = await vscode.window.showQuickPick(
    options.map((option) => ({
      label: option.title || "untitled",
      description: `${option.messageCount} messages${option.sessionId === sessions.sessionId ? " · current" : ""}`,
      detail: option.foreign ? option.workspace : undefined,
      sessionId: option.sessionId,
    })),
    { placeHolder, matchOnDetail: true },
  );
  return picked?.sessionId;
}

export function registerSessionCommands(sessions: Sessions, rpc: Rpc): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand("bonsai.session.new", () => guarded("new session", () => sessions.create())),
    vscode.commands.registerCommand("bonsai.session.switch", () =>
      guarded("switch session", async () => {
        const sessionId = await pickSession(
          sessions,
          "Attach this window to a session (sessions of other workspaces are listed too)",
        );
        if (sessionId !== undefined) {
          await sessions.attach(sessionId);
        }
      }),
    ),
    vscode.commands.registerCommand("bonsai.session.rename", () =>
      guarded("rename", async () => {
        const sessionId = sessions.sessionId;
        const title = sessionId && (await vscode.window.showInputBox({ prompt: "New session title" }));
        if (sessionId && title) {
          await rpc.request("bonsai/session/rename", { sessionId, title });
        }
      }),
    ),
    vscode.commands.registerCommand("bonsai.session.delete", () =>
      guarded("delete", async () => {
        const sessionId = await pickSession(sessions, "Delete a session and everything stored for it");
        const answer =
          sessionId &&
          (await vscode.window.showWarningMessage(
            "Delete this session and everything stored for it?",
            { modal: true },
            "Delete",
          ));
        if (sessionId && answer === "Delete") {
          await rpc.request("bonsai/session/delete", { sessionId });
          await sessions.forget(sessionId);
        }
      }),
    ),
  ];
}
