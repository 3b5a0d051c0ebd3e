/** Applies the editor's bonsai.provider / model / preset settings to the daemon on connect and on change. */
import * as vscode from "vscode";
import type { Rpc } from "../rpc/rpc";
import { errorText } from "../util/format";
import { type EditorSettings, settingsPlan } from "./settingsPlan";

function editorSettings(): EditorSettings {
  const config = vscode.workspace.getConfiguration("bonsai");
  return {
    provider: config.get<string>("provider") ?? "",
    model: config.get<string>("model") ?? "",
    preset: config.get<string>("preset") ?? "",
  };
}

export async function applySettings(rpc: Rpc, workspace: string, output: vscode.LogOutputChannel): Promise<void> {
  try {
    const { effective } = await rpc.request("bonsai/config/get", { workspace });
    for (const action of settingsPlan(editorSettings(), effective)) {
      output.info(`applying editor setting: ${JSON.stringify(action)}`);
      if (action.kind === "set") {
        await rpc.request("bonsai/config/set", { key: action.key, value: action.value, scope: "user" });
      } else {
        await rpc.request("bonsai/config/preset", { preset: action.preset });
      }
    }
  } catch (error) {
    void vscode.window.showErrorMessage(`bonsai: could not apply the bonsai.* settings: ${errorText(error)}`);
  }
}

/** Reconnect when the launch command changes; re-apply daemon settings when they change. */
export function watchSettings(
  rpc: Rpc,
  workspace: string,
  output: vscode.LogOutputChannel,
  restart: () => Promise<void>,
): vscode.Disposable[] {
  return [
    rpc.onDidChangeState((state) => state.kind === "running" && void applySettings(rpc, workspace, output)),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration("bonsai.command") || event.affectsConfiguration("bonsai.args")) {
        void restart();
      } else if (["provider", "model", "preset"].some((key) => event.affectsConfiguration(`bonsai.${key}`))) {
        void applySettings(rpc, workspace, output);
      }
    }),
  ];
}
