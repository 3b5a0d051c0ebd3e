/** Rule commands: add, edit, switch on/off, delete. The daemon validates; we show its errors. */
import * as vscode from "vscode";
import type { Rpc } from "../rpc/rpc";
import type { TreeNode } from "../tree/node";
import { errorText } from "../util/format";
import type { RulesProvider } from "./rulesProvider";

const MAX_RULE_CHARS = 300;

function selectedRule(node: TreeNode | undefined, rules: RulesProvider): { id: string; text: string } | undefined {
  const data = (node ?? rules.view.selection[0])?.data;
  if (typeof data?.id !== "string" || typeof data.text !== "string") {
    void vscode.window.showWarningMessage("bonsai: select a rule first.");
    return undefined;
  }
  return { id: data.id, text: data.text };
}

async function guarded(what: string, action: () => Promise<unknown>, rules: RulesProvider): Promise<void> {
  try {
    await action();
  } catch (error) {
    void vscode.window.showErrorMessage(`bonsai: ${what} failed: ${errorText(error)}`);
  }
  await rules.refresh();
}

function askText(value?: string): Thenable<string | undefined> {
  return vscode.window.showInputBox({
    prompt: "A standing instruction for the agent in this workspace",
    placeHolder: "Always use pnpm, never npm",
    value,
    validateInput: (text) =>
      text.trim().length > MAX_RULE_CHARS ? `At most ${MAX_RULE_CHARS} characters.` : undefined,
  });
}

export function registerRulesCommands(rpc: Rpc, rules: RulesProvider): vscode.Disposable[] {
  const setEnabled = (enabled: boolean) => (node?: TreeNode) => {
    const rule = selectedRule(node, rules);
    return (
      rule && guarded("switching the rule", () => rpc.request("bonsai/rules/edit", { id: rule.id, enabled }), rules)
    );
  };
  return [
    vscode.commands.registerCommand("bonsai.rules.refresh", () => rules.refresh()),
    vscode.commands.registerCommand("bonsai.rules.enable", setEnabled(true)),
    vscode.commands.registerCommand("bonsai.rules.disable", setEnabled(false)),
    vscode.commands.registerCommand("bonsai.rules.add", async () => {
      const text = await askText();
      if (text?.trim()) {
        await guarded(
          "adding the rule",
          () => rpc.request("bonsai/rules/add", { workspace: rules.workspace, text }),
          rules,
        );
      }
    }),
    vscode.commands.registerCommand("bonsai.rules.edit", async (node?: TreeNode) => {
      const rule = selectedRule(node, rules);
      const text = rule && (await askText(rule.text));
      if (rule && text !== undefined && text !== rule.text) {
        await guarded("editing the rule", () => rpc.request("bonsai/rules/edit", { id: rule.id, text }), rules);
      }
    }),
    vscode.commands.registerCommand("bonsai.rules.delete", async (node?: TreeNode) => {
      const rule = selectedRule(node, rules);
      const answer =
        rule && (await vscode.window.showWarningMessage(`Delete the rule "${rule.text}"?`, { modal: true }, "Delete"));
      if (rule && answer === "Delete") {
        await guarded("deleting the rule", () => rpc.request("bonsai/rules/delete", { id: rule.id }), rules);
      }
    }),
  ];
}
