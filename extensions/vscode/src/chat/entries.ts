/** What the chat panel shows: one entry per user message, reply segment, tool call or notice. */

export type ApprovalState = "pending" | "approved" | "rejected" | "expired";
export type NoticeLevel = "info" | "warning" | "error";

export interface UserEntry {
  kind: "user";
  key: string;
  text: string;
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
}

export type Entry = UserEntry | AssistantEntry | ToolEntry | NoticeEntry | ApprovalEntry;
