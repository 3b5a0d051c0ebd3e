/** A vscode-free description of one tree row; the providers turn it into a TreeItem. */

export interface NodeIcon {
  /** A codicon id, e.g. "pinned". */
  id: string;
  /** A theme colour id, e.g. "charts.yellow". */
  color?: string;
}

/** What selecting the row does. */
export type NodeAction =
  | { kind: "ctxText"; sessionId: string; nodeId: string; label: string }
  | { kind: "blob"; name: string; text: string; language: string }
  | { kind: "openFile"; path: string };

export interface TreeNode {
  /** Unique and stable across refreshes, so expansion state survives. */
  id: string;
  label: string;
  description?: string;
  tooltip?: string;
  icon?: NodeIcon;
  contextValue?: string;
  expanded?: boolean;
  children?: TreeNode[];
  action?: NodeAction;
  /** Payload for item commands (pin, restore, forget …). */
  data?: Record<string, string | number | boolean>;
}
