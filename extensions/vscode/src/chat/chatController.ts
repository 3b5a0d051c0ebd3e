/**
 * The chat panel's logic: turns webview actions into daemon requests and daemon
 * events into transcript updates. Knows nothing of vscode; the view provider
 * plugs in a port to the webview and the UI hooks.
 */
import type {
  ApprovalRequestParams,
  ApprovalRequestResult,
  ApprovalResolvedParams,
  ChatEventParams,
  SessionEventParams,
} from "../protocol.generated";
import type { ConnectionState, Rpc } from "../rpc/rpc";
import { isConfigError } from "../session/clientSettings";
import type { Sessions } from "../session/sessions";
import type { Disposable } from "../util/emitter";
import { errorText } from "../util/format";
import type { Entry, NoticeLevel } from "./entries";
import type { FromWebview, ToWebview } from "./messages";
import { parseInput } from "./slash";
import { runSlash, type ViewName } from "./slashCommands";
import { Transcript } from "./transcript";

export interface ChatPort {
  post(message: ToWebview): void;
}

export interface ChatUi {
  reveal(view: ViewName): void;
  revealChat(): void;
  /** How many approvals wait in this window (badge, status bar item). */
  approvalsWaiting?(count: number, latest: string | undefined): void;
  /** Open what an approval changes for review (a diff editor); returns a warning to show, if any. */
  review?(params: ApprovalRequestParams): string | undefined;
  /** The approval was answered or withdrawn: close its review. */
  reviewDone?(approvalId: string): void;
  /** A setting of this editor cannot apply (the daemon's words, naming the fix). */
  warn?(message: string): void;
}

/** An approval's outcome in words, for this window. */
export function resolvedVerdict(params: ApprovalResolvedParams): string {
  const where = params.yours ? "" : ` in ${params.by || "another window"}`;
  switch (params.outcome) {
    case "approved":
      return `Approved${where}`;
    case "rejected":
      return `Rejected${where}`;
    case "cancelled":
      return "Withdrawn: the turn was cancelled";
    case "expired":
      return "Withdrawn: nobody answered in time";
    case "unanswered":
      return "Withdrawn: nobody could answer";
  }
}

function resolvedState(params: ApprovalResolvedParams): "approved" | "rejected" | "expired" {
  return params.outcome === "approved" || params.outcome === "rejected" ? params.outcome : "expired";
}

export class ChatController {
  private transcript = new Transcript();
  private readonly ports = new Set<ChatPort>();
  private readonly approvals = new Map<
    string,
    {
      /** What the card shows: drawn again when the window loads the approval's session again. */
      request: ApprovalRequestParams & { warning?: string };
      answer(approved: boolean): void;
      close(state: "approved" | "rejected" | "expired", verdict: string): void;
    }
  >();
  private approvalCount = 0;
  /** Chat events that came while this window attached their session. */
  private backlog: ChatEventParams[] = [];
  private lastTurn: string | undefined;

  constructor(
    private readonly rpc: Rpc,
    private readonly sessions: Sessions,
    private readonly ui: ChatUi,
  ) {}

  /** Subscribe to the daemon and session events this panel renders. */
  subscribe(): Disposable[] {
    return [
      this.rpc.onNotification("bonsai/chat/event", (event) => this.onChatEvent(event)),
      this.rpc.onNotification("bonsai/approval/resolved", (event) => this.onApprovalResolved(event)),
      this.rpc.onNotification("bonsai/session/event", (event) => void this.onSessionEvent(event)),
      this.rpc.onDidChangeState((state) => this.onConnection(state)),
      this.sessions.onDidAttach((result) => {
        const sessionId = result.session.sessionId;
        const backlog = this.backlog.filter((event) => event.sessionId === sessionId);
        this.backlog = [];
        this.transcript = new Transcript();
        this.transcript.load(result.messages, backlog);
        for (const [id, { request }] of this.approvals) {
          if (request.sessionId === sessionId) {
            this.transcript.addApproval(id, request); // still waiting for this window's answer
          }
        }
        this.postReset();
        void this.refreshSessions();
      }),
      this.sessions.onDidChange((sessionId) => {
        if (sessionId === undefined) {
          this.transcript = new Transcript();
          this.postReset();
          void this.refreshSessions();
        }
      }),
    ];
  }

  /** A chat webview (the view, or the chat in an editor tab); all get the same entries. */
  attachPort(port: ChatPort): void {
    this.ports.add(port);
  }

  detachPort(port: ChatPort): void {
    this.ports.delete(port);
  }

  get entries(): readonly Entry[] {
    return this.transcript.entries;
  }

  async handle(message: FromWebview): Promise<void> {
    try {
      await this.dispatch(message);
    } catch (error) {
      this.notice("error", errorText(error));
      if (isConfigError(error)) {
        this.ui.warn?.(`bonsai: ${errorText(error)}`);
      }
    }
  }

  /** Show a markdown notice in the transcript (slash replies, recalls, errors). */
  notice(level: NoticeLevel, markdown: string): void {
    this.upsert([this.transcript.addNotice(level, markdown)]);
  }

  /**
   * Ask the user inline; resolves on their answer, or `approved: false` when the
   * daemon withdraws it or another window answered first (its
   * `bonsai/approval/resolved` closes the card here at once).
   */
  requestApproval(params: ApprovalRequestParams, signal: AbortSignal): Promise<ApprovalRequestResult> {
    this.approvalCount += 1;
    const id = params.approvalId ?? `${params.turnId}:${this.approvalCount}`;
    const warning = this.ui.review?.(params);
    const request = { ...params, ...(warning ? { warning } : {}) };
    const entry = this.transcript.addApproval(id, request);
    this.upsert([entry]);
    this.ui.revealChat();
    this.post({ type: "reveal", key: entry.key });
    return new Promise((resolve) => {
      const finish = (approved: boolean, state: "approved" | "rejected" | "expired", verdict?: string): void => {
        if (!this.approvals.delete(id)) {
          return;
        }
        this.ui.reviewDone?.(id);
        const changed = this.transcript.setApprovalState(id, state, verdict);
        if (changed !== undefined) {
          this.upsert([changed]);
        }
        this.approvalsChanged();
        resolve({ approved });
      };
      this.approvals.set(id, {
        request,
        answer: (approved) => finish(approved, approved ? "approved" : "rejected"),
        close: (state, verdict) => finish(false, state, verdict),
      });
      this.approvalsChanged();
      signal.addEventListener("abort", () => finish(false, "expired"), { once: true });
    });
  }

  /** Every client hears how an approval ended: update (or close) the card here. */
  private onApprovalResolved(params: ApprovalResolvedParams): void {
    const verdict = resolvedVerdict(params);
    const pending = this.approvals.get(params.approvalId);
    if (pending !== undefined) {
      pending.close(resolvedState(params), verdict);
      return;
    }
    const entry = this.transcript.setApprovalState(params.approvalId, resolvedState(params), verdict);
    if (entry !== undefined) {
      this.upsert([entry]);
    }
  }

  private approvalsChanged(): void {
    const waiting = [...this.approvals.keys()];
    const latest = waiting.length > 0 ? this.transcript.approval(waiting[waiting.length - 1] ?? "") : undefined;
    this.ui.approvalsWaiting?.(waiting.length, latest && `${latest.tool}${latest.path ? ` ${latest.path}` : ""}`);
  }

  private async dispatch(message: FromWebview): Promise<void> {
    switch (message.type) {
      case "ready":
        this.postReset();
        this.onConnection(this.rpc.state);
        await this.postSessions();
        return;
      case "send":
        return this.send(message.text);
      case "cancel":
        return this.cancel();
      case "newSession":
        await this.sessions.create();
        return;
      case "switchSession":
        await this.sessions.attach(message.sessionId);
        return;
      case "approval": {
        const pending = this.approvals.get(message.id);
        if (pending !== undefined) {
          pending.answer(message.approved);
          return;
        }
        const entry = this.transcript.approval(message.id);
        const how = entry?.verdict ?? "answered";
        this.notice(
          "info",
          `That approval was already ${how.charAt(0).toLowerCase()}${how.slice(1)}; your answer was not used.`,
        );
        return;
      }
    }
  }

  private async send(text: string): Promise<void> {
    const input = parseInput(text);
    if (input.kind === "invalid") {
      this.notice("error", input.error);
      return;
    }
    if (input.kind !== "message") {
      const reply = await runSlash(input, {
        rpc: this.rpc,
        workspace: this.sessions.workspace,
        session: () => this.sessions.ensure(),
        reveal: (view) => this.ui.reveal(view),
      });
      this.notice("info", reply);
      return;
    }
    let turnId: string;
    try {
      const sessionId = await this.sessions.ensure();
      const client = this.sessions.client();
      ({ turnId } = await this.rpc.request("bonsai/chat/send", {
        sessionId,
        text: input.text,
        ...(client === undefined ? {} : { client }),
      }));
    } catch (error) {
      this.post({ type: "restoreInput", text });
      throw error;
    }
    this.lastTurn = turnId;
    this.transcript.turnStarted(turnId);
    this.post({ type: "busy", busy: this.transcript.busy });
  }

  private async cancel(): Promise<void> {
    const sessionId = this.sessions.sessionId;
    if (sessionId === undefined) {
      return;
    }
    // the turn streaming, not the last one sent: a message sent behind it waits, and runs next
    const turnId = this.transcript.streamingTurn ?? this.lastTurn;
    const params = turnId === undefined ? { sessionId } : { sessionId, turnId };
    const { cancelled } = await this.rpc.request("bonsai/chat/cancel", params);
    if (!cancelled) {
      this.notice("info", "Nothing to cancel.");
    }
  }

  private onChatEvent(event: ChatEventParams): void {
    if (event.sessionId === this.sessions.attaching) {
      this.backlog.push(event); // the running turn so far: shown with the log the attach loads
      return;
    }
    if (event.sessionId !== this.sessions.sessionId) {
      return;
    }
    const wasBusy = this.transcript.busy;
    this.upsert(this.transcript.chatEvent(event));
    if (wasBusy !== this.transcript.busy) {
      this.post({ type: "busy", busy: this.transcript.busy });
    }
    if (event.kind === "done" || event.kind === "error" || event.kind === "cancelled") {
      void this.refreshSessions();
    }
  }

  private async onSessionEvent(event: SessionEventParams): Promise<void> {
    if (event.kind === "deleted") {
      await this.sessions.forget(event.sessionId);
    }
    if (event.sessionId === this.sessions.sessionId && event.kind === "messageAppended" && event.message) {
      this.upsert(this.transcript.messageAppended(event.message));
    }
    if (event.kind !== "messageAppended") {
      await this.postSessions();
    }
  }

  private onConnection(state: ConnectionState): void {
    const connected = state.kind === "running";
    const detail =
      state.kind === "starting"
        ? "Connecting to bonsai…"
        : state.kind === "running"
          ? ""
          : `bonsai is not connected: ${state.reason}. Run "bonsai: Restart".`;
    this.post({ type: "connection", connected, detail });
  }

  /** Re-list sessions in the picker (the view became visible; others may have made some). */
  refreshSessions(): Promise<void> {
    return this.postSessions().catch((error: unknown) =>
      this.notice("error", `Could not list sessions: ${errorText(error)}`),
    );
  }

  private async postSessions(): Promise<void> {
    if (this.ports.size === 0 || this.rpc.state.kind !== "running") {
      return;
    }
    const sessions = await this.sessions.list();
    this.post({ type: "sessions", sessions, currentId: this.sessions.sessionId ?? null });
  }

  private postReset(): void {
    this.post({ type: "reset", entries: [...this.transcript.entries], busy: this.transcript.busy });
  }

  private upsert(entries: Entry[]): void {
    if (entries.length > 0) {
      this.post({ type: "upsert", entries });
    }
  }

  private post(message: ToWebview): void {
    for (const port of this.ports) {
      port.post(message);
    }
  }
}
