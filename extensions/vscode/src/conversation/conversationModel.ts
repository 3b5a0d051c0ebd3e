/** The conversation tree as rows: nested by parent, with the attachment suggestion on questions. */
import type { TreeGetResult, TreeNodeInfo } from "../protocol.generated";
import type { TreeNode } from "../tree/node";

const ICONS: Record<TreeNodeInfo["kind"], string> = {
  question: "comment",
  answer: "hubot",
  tool_result: "tools",
  system: "gear",
};

function short(text: string, max = 40): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** "→ move under «label» (0.62)" for a question the rule would put elsewhere. */
export function suggestion(node: TreeNodeInfo, labels: Map<string, string>): string | undefined {
  const attach = node.attach;
  if (attach === undefined || attach === null || attach.placed) {
    return undefined;
  }
  const where = attach.target ? `«${short(labels.get(attach.target) ?? attach.target)}»` : "the root";
  return `→ move under ${where} (${attach.score.toFixed(2)})`;
}

export function conversationNodes(sessionId: string, tree: TreeGetResult): TreeNode[] {
  const labels = new Map(tree.nodes.map((n) => [n.nodeId, n.label]));
  const onPath = new Set(tree.activePath);
  const rows = new Map<string, TreeNode>();
  const roots: TreeNode[] = [];
  for (const node of tree.nodes) {
    const hint = suggestion(node, labels);
    const movable = hint !== undefined && node.state === "visible";
    const row: TreeNode = {
      id: node.nodeId,
      label: short(node.label, 80),
      description: [node.state === "hidden" ? "hidden" : undefined, `${node.tokens} tok`, hint]
        .filter((part) => part !== undefined)
        .join(" · "),
      tooltip: node.attach ? `${node.attach.reason} (${node.attach.similarity})` : undefined,
      icon: { id: ICONS[node.kind], color: onPath.has(node.nodeId) ? "charts.green" : undefined },
      contextValue: movable ? "turn.suggested" : `turn.${node.kind}`,
      expanded: true,
      children: [],
      data: movable
        ? { sessionId, nodeId: node.nodeId, target: node.attach?.target ?? "" }
        : { sessionId, nodeId: node.nodeId },
    };
    rows.set(node.nodeId, row);
    const parent = node.parentId ? rows.get(node.parentId) : undefined;
    (parent?.children ?? roots).push(row);
  }
  for (const row of rows.values()) {
    if (row.children?.length === 0) {
      delete row.children;
      delete row.expanded;
    }
  }
  return roots;
}
