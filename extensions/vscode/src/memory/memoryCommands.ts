/** Memory commands: add, open, forget, enable/disable, and the promotion-suggestion toast. */
import * as vscode from "vscode";
import type { MemorySuggestionParams } from "../protocol.generated";
import type { Rpc } from "../rpc/rpc";
import type { TreeNode } from "../tree/node";
import { errorText } from "../util/format";
import type { MemoryProvider } from "./memoryProvider";

function entryName(node: TreeNode | undefined, memory: MemoryProvider): string | undefined {
  const name = (node ?? memory.view.selection[0])?.data?.name;
  if (typeof name !== "string") {
    void vscode.window.showWarningMessage("bonsai: select a memory entry first.");
    return undefined;
  }
  return name;
}

async function guarded(what: string, action: () => Promise<unknown>, memory: MemoryProvider): Promise<void> {
  try {
    await action();
  } catch (error) {
    void vscode.window.showErrorMessage(`bonsai: ${what} failed: ${errorText(error)}`);
  }
  await memory.refresh();
}

export function registerMemoryCommands(rpc: Rpc, memory: MemoryProvider): vscode.Disposable[] {
  const workspace = memory.workspace;
  const setEnabled = (enabled: boolean) => (node?: TreeNode) => {
    const name = entryName(node, memory);
    return (
      name && guarded("toggling", () => rpc.request("bonsai/memory/setEnabled", { name, enabled, workspace }), memory)
    );
  };
  return [
    vscode.commands.registerCommand("bonsai.memory.refresh", () => memory.refresh()),
    vscode.commands.registerCommand("bonsai.memory.enable", setEnabled(true)),
    vscode.commands.registerCommand("bonsai.memory.disable", setEnabled(false)),
    vscode.commands.registerCommand("bonsai.memory.open", async (node?: TreeNode) => {
      const path = (node ?? memory.view.selection[0])?.data?.path;
      if (typeof path === "string") {
        await vscode.window.showTextDocument(vscode.Uri.file(path));
      }
    }),
    vscode.commands.registerCommand("bonsai.memory.forget", async (node?: TreeNode) => {
      const name = entryName(node, memory);
      const answer =
        name &&
        (await vscode.window.showWarningMessage(
          `Forget the memory entry "${name}"? Its file is deleted.`,
          { modal: true },
          "Forget",
        ));
      if (name && answer === "Forget") {
        await guarded("forget", () => rpc.request("bonsai/memory/forget", { name, workspace }), memory);
      }
    }),
    vscode.commands.registerCommand("bonsai.memory.add", async () => {
      const fact = await vscode.window.showInputBox({
        prompt: "A fact for bonsai to remember",
        placeHolder: "Use thiserror enums at module boundaries",
      });
      if (!fact) {
        return;
      }
      const tier = await vscode.window.showQuickPick(["project", "user"], {
        placeHolder: "Which memory: this project (git-tracked) or yours (all projects)?",
      });
      if (tier === "project" || tier === "user") {
        await guarded("remember", () => rpc.request("bonsai/memory/add", { fact, tier, workspace }), memory);
      }
    }),
    rpc.onNotification("bonsai/memory/suggestion", (params) => void confirmSuggestion(rpc, memory, params)),
  ];
}

/** "Remember these N things?" with a Save action per tier. */
async function confirmSuggestion(rpc: Rpc, memory: MemoryProvider, params: MemorySuggestionParams): Promise<void> {
  if (params.facts.length === 0) {
    return;
  }
  const list = params.facts.map((fact) => `• ${fact}`).join("\n");
  const answer = await vscode.window.showInformationMessage(
    `bonsai: remember ${params.facts.length} fact${params.facts.length === 1 ? "" : "s"} from this session?\n${list}`,
    "Save to project",
    "Save for me",
  );
  if (answer === undefined) {
    return;
  }
  const tier = answer === "Save to project" ? "project" : "user";
  await guarded(
    "remember",
    async () => {
      for (const fact of params.facts) {
        await rpc.request("bonsai/memory/add", { fact, tier, workspace: memory.workspace });
      }
    },
    memory,
  );
}
