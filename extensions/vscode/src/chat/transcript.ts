/**
 * The chat transcript as a reducer over daemon events. Pure: the extension keeps
 * one per window and posts changed entries to the webview. Stored messages
 * (history, messageAppended) and live turn events (chat/event) are merged so
 * that a reply is shown once, however the two streams interleave.
 */
import type {
  ChatEventParams,
  ChatToolCallParams,
  ChatToolResultParams,
  UsageInfo,
  WireMessage,
} from "../protocol.generated";
import { formatTokens } from "../util/format";
import type { ApprovalEntry, ApprovalState, AssistantEntry, Entry, NoticeLevel, ToolEntry } from "./entries";

/** What an approval card needs from the daemon's request (and the window's own checks). */
export interface ApprovalRequest {
  tool: string;
  args?: Record<string, unknown> | null;
  diff?: string | null;
  path?: string | null;
  cwd?: string | null;
  warning?: string;
}

export class Transcript {
  private list: Entry[] = [];
  private readonly lastSeq = new Map<string, number>();
  private readonly runningTurns = new Set<string>();
  private noticeCount = 0;

  get entries(): readonly Entry[] {
    return this.list;
  }

  /** Turns that have started and not yet reported done or error. */
  get busy(): boolean {
    return this.runningTurns.size > 0;
  }

  /**
   * The turn streaming now: the oldest one not ended (a session runs its turns in the
   * order they were sent, so those sent behind it wait). Undefined when none runs.
   */
  get streamingTurn(): string | undefined {
    return this.runningTurns.values().next().value;
  }

  /**
   * Replace everything with a session's stored log and, for a window attaching
   * mid-turn, the running turn's events so far (`backlog`, in order). A step the
   * log already holds (its tool calls are stored) is not shown again; the step
   * still streaming is shown from its first word.
   */
  load(messages: readonly WireMessage[], backlog: readonly ChatEventParams[] = []): void {
    this.list = [];
    this.lastSeq.clear();
    this.runningTurns.clear();
    for (const message of messages) {
      this.appendStored(message);
    }
    const stored = new Set(this.list.flatMap((entry) => (entry.kind === "tool" ? [entry.toolCallId] : [])));
    for (const step of turnSteps(backlog)) {
      const calls = step.filter((event) => event.kind === "toolCall");
      const inLog = calls.length > 0 && calls.every((call) => stored.has(call.toolCallId));
      for (const event of step) {
        this.runningTurns.add(event.turnId);
        if (inLog && STEP_KINDS.has(event.kind)) {
          this.lastSeq.set(event.turnId, Math.max(event.seq, this.lastSeq.get(event.turnId) ?? 0));
        } else {
          this.chatEvent(event);
        }
      }
    }
  }

  /** A message stored in the session (by this or another window). Returns changed entries. */
  messageAppended(message: WireMessage): Entry[] {
    return this.appendStored(message);
  }

  turnStarted(turnId: string): void {
    this.runningTurns.add(turnId);
  }

  /** One event of a running turn. Returns the entries that changed (empty for duplicates). */
  chatEvent(event: ChatEventParams): Entry[] {
    const last = this.lastSeq.get(event.turnId);
    if (last !== undefined && event.seq <= last) {
      return [];
    }
    this.lastSeq.set(event.turnId, event.seq);
    switch (event.kind) {
      case "delta":
        this.runningTurns.add(event.turnId);
        return [...this.retryDone(event.turnId), this.appendDelta(event.turnId, event.text)];
      case "toolCall":
        this.runningTurns.add(event.turnId);
        return this.startTool(event);
      case "toolResult":
        return this.finishTool(event);
      case "usage":
        return this.addUsage(event.turnId, event.usage);
      case "done":
        return [...this.retryDone(event.turnId), ...this.endTurn(event.turnId)];
      case "error":
        return [
          ...this.retryDone(event.turnId),
          ...this.endTurn(event.turnId),
          this.addNotice("error", event.message || "turn failed"),
        ];
      case "cancelled": // not an error: the user asked, in this window or another client
        return [...this.retryDone(event.turnId), ...this.endTurn(event.turnId), this.addNotice("info", "cancelled")];
      case "notice":
        return [this.addNotice("info", event.message)];
      case "retry":
        return [this.retrying(event.turnId, event.text || "retrying…")];
    }
  }

  addNotice(level: NoticeLevel, markdown: string): Entry {
    this.noticeCount += 1;
    const entry: Entry = { kind: "notice", key: `notice:${this.noticeCount}`, level, markdown };
    this.list.push(entry);
    return entry;
  }

  addApproval(id: string, request: ApprovalRequest): ApprovalEntry {
    const args = request.args;
    const command = request.tool === "bash" && typeof args?.command === "string" ? args.command : undefined;
    const entry: ApprovalEntry = {
      kind: "approval",
      key: `approval:${id}`,
      tool: request.tool,
      args: stringifyArgs(args),
      state: "pending",
      ...(request.diff ? { diff: request.diff } : {}),
      ...(request.path ? { path: request.path } : {}),
      ...(request.cwd ? { cwd: request.cwd } : {}),
      ...(command !== undefined ? { command } : {}),
      ...(request.warning ? { warning: request.warning } : {}),
    };
    this.list.push(entry);
    return entry;
  }

  approval(id: string): ApprovalEntry | undefined {
    const entry = this.list.find((item) => item.key === `approval:${id}`);
    return entry?.kind === "approval" ? entry : undefined;
  }

  setApprovalState(id: string, state: ApprovalState, verdict?: string): Entry | undefined {
    const entry = this.approval(id);
    if (entry === undefined) {
      return undefined;
    }
    entry.state = state;
    if (verdict !== undefined) {
      entry.verdict = verdict;
    }
    return entry;
  }

  /** The provider is rate limiting: show when the retry comes, until it does. */
  retrying(turnId: string, text: string): Entry {
    const key = `retry:${turnId}`;
    const existing = this.list.find((entry) => entry.key === key);
    if (existing?.kind === "retry") {
      existing.text = text;
      existing.active = true;
      return existing;
    }
    return this.push({ kind: "retry", key, turnId, text, active: true });
  }

  private retryDone(turnId: string): Entry[] {
    const entry = this.list.find((item) => item.key === `retry:${turnId}`);
    if (entry?.kind !== "retry" || !entry.active) {
      return [];
    }
    entry.active = false;
    return [entry];
  }

  private appendStored(message: WireMessage): Entry[] {
    const key = `msg:${message.messageId}`;
    if (this.list.some((entry) => entry.key === key)) {
      return [];
    }
    switch (message.role) {
      case "user":
        if (message.recalled != null) {
          const { sources, titles, text } = message.recalled;
          return [this.push({ kind: "recalled", key, sources, titles: titles ?? [], text })];
        }
        return [this.push({ kind: "user", key, text: message.content })];
      case "assistant":
        return this.appendAssistant(message, key);
      case "tool":
        return this.appendToolResult(message);
      case "system":
        return [];
    }
  }

  private appendAssistant(message: WireMessage, key: string): Entry[] {
    const calls = message.toolCalls ?? [];
    const live = this.list.find(
      (entry): entry is AssistantEntry => entry.kind === "assistant" && !entry.bound && entry.turnId !== undefined,
    );
    const changed: Entry[] = [];
    if (live !== undefined && message.content !== "") {
      live.bound = true;
      live.text = message.content;
      changed.push(live);
    } else if (message.content !== "") {
      changed.push(this.push({ kind: "assistant", key, text: message.content, streaming: false, bound: true }));
    }
    // Calls are keyed by their turn (or, for stored history, their message) and id:
    // a provider that repeats call ids across turns still gets one card per call.
    const scope = live?.turnId ?? message.messageId;
    for (const call of calls) {
      if (this.findTool(call.id, scope) === undefined) {
        changed.push(
          this.push({
            kind: "tool",
            key: `tool:${scope}:${call.id}`,
            scope,
            toolCallId: call.id,
            name: call.name,
            args: call.arguments,
            isError: false,
            pending: true,
          }),
        );
      }
    }
    return changed;
  }

  private appendToolResult(message: WireMessage): Entry[] {
    const id = message.toolCallId ?? message.messageId;
    const tool = this.findTool(id);
    if (tool === undefined) {
      return [
        this.push({
          kind: "tool",
          key: `tool:${message.messageId}:${id}`,
          scope: message.messageId,
          toolCallId: id,
          name: message.name ?? "tool",
          args: "",
          result: message.content,
          isError: message.status === "error",
          pending: false,
        }),
      ];
    }
    if (tool.result !== undefined) {
      return [];
    }
    tool.result = message.content;
    tool.pending = false;
    tool.isError = message.status === "error";
    return [tool];
  }

  private appendDelta(turnId: string, text: string): Entry {
    const tail = this.list[this.list.length - 1];
    if (tail?.kind === "assistant" && tail.turnId === turnId && tail.streaming) {
      tail.text += text;
      return tail;
    }
    const segment = this.list.filter((entry) => entry.kind === "assistant" && entry.turnId === turnId).length;
    return this.push({
      kind: "assistant",
      key: `turn:${turnId}:${segment}`,
      text,
      streaming: true,
      bound: false,
      turnId,
    });
  }

  /** A tool call ends the reply segment before it; returns both changed entries. */
  private startTool(event: ChatToolCallParams): Entry[] {
    const id = event.toolCallId || `${event.turnId}:${event.seq}`;
    const segment = this.lastSegment(event.turnId);
    const closed = segment?.streaming ? [segment] : [];
    if (segment !== undefined) {
      segment.streaming = false;
    }
    const existing = this.findTool(id, event.turnId);
    if (existing !== undefined) {
      return [...closed, existing];
    }
    const tool = this.push({
      kind: "tool",
      key: `tool:${event.turnId}:${id}`,
      scope: event.turnId,
      toolCallId: id,
      name: event.name || "tool",
      args: stringifyArgs(event.args),
      isError: false,
      pending: true,
    });
    return [...closed, tool];
  }

  private finishTool(event: ChatToolResultParams): Entry[] {
    const tool = this.findTool(event.toolCallId, event.turnId);
    if (tool === undefined) {
      return [];
    }
    tool.result = event.result;
    tool.isError = event.isError;
    tool.pending = false;
    return [tool];
  }

  private addUsage(turnId: string, usage: UsageInfo): Entry[] {
    const segment = this.lastSegment(turnId);
    if (segment === undefined) {
      return [];
    }
    segment.usage = formatUsage(usage);
    return [segment];
  }

  private endTurn(turnId: string): Entry[] {
    this.runningTurns.delete(turnId);
    const changed: Entry[] = [];
    for (const entry of this.list) {
      if (entry.kind === "assistant" && entry.turnId === turnId && entry.streaming) {
        entry.streaming = false;
        changed.push(entry);
      }
    }
    return changed;
  }

  private lastSegment(turnId: string): AssistantEntry | undefined {
    for (let index = this.list.length - 1; index >= 0; index--) {
      const entry = this.list[index];
      if (entry?.kind === "assistant" && entry.turnId === turnId) {
        return entry;
      }
    }
    return undefined;
  }

  /** The newest card of this call id (within `scope`, a turn or message id, when given). */
  private findTool(toolCallId: string, scope?: string): ToolEntry | undefined {
    for (let index = this.list.length - 1; index >= 0; index--) {
      const entry = this.list[index];
      if (entry?.kind === "tool" && entry.toolCallId === toolCallId && (scope === undefined || entry.scope === scope)) {
        return entry;
      }
    }
    return undefined;
  }

  private push<E extends Entry>(entry: E): E {
    this.list.push(entry);
    return entry;
  }
}

/** The events a stored step stands for (its reply, calls, results and usage). */
const STEP_KINDS = new Set<ChatEventParams["kind"]>(["delta", "toolCall", "toolResult", "usage"]);

/** A turn's events cut into model steps: a step's text and calls, then its results; text after a call starts the next. */
function turnSteps(events: readonly ChatEventParams[]): ChatEventParams[][] {
  const steps: ChatEventParams[][] = [];
  let step: ChatEventParams[] = [];
  for (const event of events) {
    if (event.kind === "delta" && step.some((seen) => seen.kind === "toolCall" && seen.turnId === event.turnId)) {
      steps.push(step);
      step = [];
    }
    step.push(event);
  }
  steps.push(step);
  return steps;
}

export function formatUsage(usage: UsageInfo): string {
  const parts = [`in ${formatTokens(usage.inputTokens)}`, `out ${formatTokens(usage.outputTokens)}`];
  if (usage.cachedInputTokens) {
    parts.push(`cached ${formatTokens(usage.cachedInputTokens)}`);
  }
  return parts.join(" · ");
}

function stringifyArgs(args: unknown): string {
  if (args === undefined || args === null) {
    return "";
  }
  return typeof args === "string" ? args : JSON.stringify(args, null, 2);
}
