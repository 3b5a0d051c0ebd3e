/** The conversation tree as rows: turns and branches, with the attachment suggestion on questions. */
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

/**
 * Rows grouped by turn and branch, not one level per message: a question row
 * holds its turn (the answers and tool results until the next question); the
 * next question of the same branch follows it at the same level; where a turn
 * has several next questions (a fork), each branch gets a "branch N" row.
 */
export function conversationNodes(sessionId: string, tree: TreeGetResult): TreeNode[] {
  const labels = new Map(tree.nodes.map((n) => [n.nodeId, n.label]));
  const onPath = new Set(tree.activePath);
  const byId = new Map(tree.nodes.map((n) => [n.nodeId, n]));
  const head = new Map<string, string>(); // node → the question (or root) starting its turn
  const members = new Map<string, TreeNode[]>();
  const followers = new Map<string, TreeNodeInfo[]>();
  const heads: TreeNodeInfo[] = [];
  for (const node of tree.nodes) {
    const parentHead = node.parentId ? head.get(node.parentId) : undefined;
    if (node.kind === "question" || parentHead === undefined) {
      head.set(node.nodeId, node.nodeId);
      members.set(node.nodeId, []);
      if (parentHead === undefined) {
        heads.push(node);
      } else {
        followers.set(parentHead, [...(followers.get(parentHead) ?? []), node]);
      }
    } else {
      head.set(node.nodeId, parentHead);
      members.get(parentHead)?.push(row(sessionId, node, labels, onPath));
    }
  }
  const chain = (list: TreeNode[], start: TreeNodeInfo): void => {
    for (let current: TreeNodeInfo | undefined = start; current !== undefined;) {
      const turn = row(sessionId, current, labels, onPath);
      const inside = members.get(current.nodeId) ?? [];
      if (inside.length > 0) {
        turn.children = inside;
        turn.expanded = onPath.has(current.nodeId);
      }
      list.push(turn);
      const next: TreeNodeInfo[] = followers.get(current.nodeId) ?? [];
      if (next.length > 1) {
        next.forEach((question, index) => {
          const active = onPath.has(question.nodeId);
          const branch: TreeNode = {
            id: `branch:${question.nodeId}`,
            label: `branch ${index + 1}`,
            description: active ? "active" : undefined,
            icon: { id: "git-branch", color: active ? "charts.green" : undefined },
            expanded: true,
            children: [],
          };
          chain(branch.children as TreeNode[], question);
          list.push(branch);
        });
        return;
      }
      current = next[0];
    }
  };
  const roots: TreeNode[] = [];
  for (const start of heads) {
    if (byId.has(start.nodeId)) {
      chain(roots, start);
    }
  }
  return roots;
}

function row(sessionId: string, node: TreeNodeInfo, labels: Map<string, string>, onPath: Set<string>): TreeNode {
  const hint = suggestion(node, labels);
  const movable = hint !== undefined && node.state === "visible";
  return {
    id: node.nodeId,
    label: short(node.label, 80),
    description: [node.state === "hidden" ? "hidden" : undefined, `${node.tokens} tok`, hint]
      .filter((part) => part !== undefined)
      .join(" · "),
    tooltip: node.attach ? `${node.attach.reason} (${node.attach.similarity})` : undefined,
    icon: { id: ICONS[node.kind], color: onPath.has(node.nodeId) ? "charts.green" : undefined },
    contextValue: movable ? "turn.suggested" : `turn.${node.kind}`,
    data: movable
      ? { sessionId, nodeId: node.nodeId, target: node.attach?.target ?? "" }
      : { sessionId, nodeId: node.nodeId },
  };
}
