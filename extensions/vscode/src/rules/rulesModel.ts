/** Rules → tree rows, one chip-like row per rule: on/off icon, text, source. Pure. */
import type { RuleInfo } from "../protocol.generated";
import type { TreeNode } from "../tree/node";

export function ruleNode(rule: RuleInfo): TreeNode {
  const detected = rule.source === "detected";
  return {
    id: `rule:${rule.id}`,
    label: rule.text,
    description: `${detected ? "detected" : "yours"}${rule.enabled ? "" : " · off"}`,
    tooltip: detected
      ? `**Detected** in one of your messages: ${rule.text}\n\nSent to the model every turn while it is on.`
      : `**Your rule**: ${rule.text}\n\nSent to the model every turn while it is on.`,
    icon: rule.enabled
      ? { id: detected ? "sparkle" : "law", color: "charts.green" }
      : { id: "circle-slash", color: "disabledForeground" },
    contextValue: rule.enabled ? "rule.enabled" : "rule.disabled",
    data: { id: rule.id, text: rule.text, enabled: rule.enabled },
  };
}

export function ruleNodes(rules: readonly RuleInfo[]): TreeNode[] {
  return rules.map(ruleNode);
}

/** The view's message: how many rules are on, or how to add the first one. */
export function rulesMessage(rules: readonly RuleInfo[]): string {
  if (rules.length === 0) {
    return "No rules yet. Add one, or tell the agent “always …” / “never …”.";
  }
  const on = rules.filter((rule) => rule.enabled).length;
  return `${on} of ${rules.length} rule${rules.length === 1 ? "" : "s"} on · sent every turn`;
}
