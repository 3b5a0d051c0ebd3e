/** "bonsai: Restart" / "bonsai: Show Output", and the error prompt when the connection fails. */
import * as vscode from "vscode";
import type { DaemonConnection } from "./connection";

export function registerConnectionCommands(
  connection: DaemonConnection,
  output: vscode.LogOutputChannel,
): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand("bonsai.restart", () => connection.restart()),
    vscode.commands.registerCommand("bonsai.showOutput", () => output.show(true)),
    connection.onDidChangeState(async (state) => {
      if (state.kind !== "failed") {
        return;
      }
      const answer = await vscode.window.showErrorMessage(`bonsai: ${state.reason}`, "Restart", "Show Output");
      if (answer === "Restart") {
        await connection.restart();
      } else if (answer === "Show Output") {
        output.show(true);
      }
    }),
  ];
}
