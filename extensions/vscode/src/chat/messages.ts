/**
 * The typed messages between the chat webview and the extension. Both sides
 * import this file; the extension validates everything it receives.
 */
import type { Entry } from "./entries";

export interface SessionOption {
  sessionId: string;
  title: string;
  workspace: string;
  messageCount: number;
  /** Belongs to another workspace (attach still works). */
  foreign: boolean;
}

/** Extension → webview. */
export type ToWebview =
  | { type: "reset"; entries: Entry[]; busy: boolean }
  | { type: "upsert"; entries: Entry[] }
  | { type: "busy"; busy: boolean }
  | { type: "sessions"; sessions: SessionOption[]; currentId: string | null }
  | { type: "connection"; connected: boolean; detail: string }
  /** Put text back into the composer (its send failed). */
  | { type: "restoreInput"; text: string }
  /** Scroll the entry into view (a pending approval). */
  | { type: "reveal"; key: string };

/** Webview → extension. */
export type FromWebview =
  | { type: "ready" }
  | { type: "send"; text: string }
  | { type: "cancel" }
  | { type: "newSession" }
  | { type: "switchSession"; sessionId: string }
  | { type: "approval"; id: string; approved: boolean };

const MAX_TEXT = 200_000;

/** Check an untrusted postMessage payload; undefined when it is not a valid FromWebview. */
export function parseFromWebview(value: unknown): FromWebview | undefined {
  if (typeof value !== "object" || value === null) {
    return undefined;
  }
  const data = value as Record<string, unknown>;
  switch (data.type) {
    case "ready":
    case "cancel":
    case "newSession":
      return { type: data.type };
    case "send":
      return isText(data.text) ? { type: "send", text: data.text } : undefined;
    case "switchSession":
      return isText(data.sessionId) && data.sessionId !== ""
        ? { type: "switchSession", sessionId: data.sessionId }
        : undefined;
    case "approval":
      return isText(data.id) && typeof data.approved === "boolean"
        ? { type: "approval", id: data.id, approved: data.approved }
        : undefined;
    default:
      return undefined;
  }
}

function isText(value: unknown): value is string {
  return typeof value === "string" && value.length <= MAX_TEXT;
}
