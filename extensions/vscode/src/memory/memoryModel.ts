/** Memory entries → tree nodes, grouped by tier. Pure. */
import type { MemoryEntryInfo } from "../protocol.generated";
import type { TreeNode } from "../tree/node";

const TIERS: readonly { tier: MemoryEntryInfo["tier"]; title: string; icon: string }[] = [
  { tier: "project", title: "Project", icon: "repo" },
  { tier: "user", title: "User", icon: "account" },
];

export function memoryNodes(entries: readonly MemoryEntryInfo[]): TreeNode[] {
  return TIERS.map(({ tier, title, icon }) => {
    const members = entries.filter((entry) => entry.tier === tier).sort((a, b) => a.name.localeCompare(b.name));
    return {
      // The count is part of the id: VS Code keeps a tree item's cached look (its
      // description, "no children") while its id stays the same.
      id: `tier:${tier}:${members.length}`,
      label: title,
      description: `${members.length}`,
      icon: { id: icon },
      expanded: true,
      children: members.map(memoryNode),
    };
  });
}

export function memoryNode(entry: MemoryEntryInfo): TreeNode {
  const enabled = entry.enabled !== false;
  return {
    id: `memory:${entry.tier}:${entry.name}`,
    label: entry.name,
    description: `${entry.type}${enabled ? "" : " · disabled"} · ${entry.description}`,
    tooltip: `**${entry.name}** (${entry.tier}, ${entry.type})\n\n${entry.description}\n\n\`${entry.path}\``,
    icon: enabled ? { id: "lightbulb", color: "charts.yellow" } : { id: "circle-slash", color: "disabledForeground" },
    contextValue: enabled ? "memory.enabled" : "memory.disabled",
    action: { kind: "openFile", path: entry.path },
    data: { name: entry.name, tier: entry.tier, path: entry.path },
  };
}
