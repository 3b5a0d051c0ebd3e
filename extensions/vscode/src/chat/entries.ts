/** What the chat panel shows: one entry per user message, reply segment, tool call or notice. */

export type ApprovalState = "pending" | "approved" | "rejected" | "expired";
export type NoticeLevel = "info" | "warning" | "error";

export interface UserEntry {
  kind: "user";
  key: string;
  text: string;
}

/** Background data the daemon added to a turn (recalled memory, related history): a chip. */
export interface RecalledEntry {
  kind: "recalled";
  key: string;
  sources: string[];
  titles: string[];
  text: string;
}

/** A "retrying in N s" line while the provider backs off; gone once the retry starts. */
export interface RetryEntry {
  kind: "retry";
  key: string;
  turnId: string;
  text: string;
  active: boolean;
}

export interface AssistantEntry {
  kind: "assistant";
  key: string;
  text: string;
  /** Still receiving deltas. */
  streaming: boolean;
  /** Matched to a stored message (so a later messageAppended is not shown twice). */
  bound: boolean;
  turnId?: string;
  usage?: string;
}

export interface ToolEntry {
  kind: "tool";
  key: string;
  /** The turn (live) or assistant message (stored) the call belongs to. */
  scope: string;
  toolCallId: string;
  name: string;
  args: string;
  result?: string;
  isError: boolean;
  pending: boolean;
}

export interface NoticeEntry {
  kind: "notice";
  key: string;
  level: NoticeLevel;
  markdown: string;
}

export interface ApprovalEntry {
  kind: "approval";
  key: string;
  tool: string;
  args: string;
  diff?: string;
  state: ApprovalState;
  /** The file an edit changes (workspace-relative) or where a command runs. */
  path?: string;
  cwd?: string;
  command?: string;
  /** A warning shown above the buttons (unsaved changes in the edited file). */
  warning?: string;
  /** How it ended, in words ("Approved in VS Code window 3"). */
  verdict?: string;
}

export type Entry = UserEntry | RecalledEntry | RetryEntry | AssistantEntry | ToolEntry | NoticeEntry | ApprovalEntry;
