/**
 * This window's session: which daemon session the chat, ledger and episode
 * views show. The daemon has no "current session"; the window remembers its
 * own in workspace state and re-attaches after a reload or reconnect.
 */
import type { ClientSettings, SessionAttachResult, SessionInfo } from "../protocol.generated";
import type { Rpc } from "../rpc/rpc";
import type { SessionOption } from "../chat/messages";
import { Emitter } from "../util/emitter";
import { clientSettings } from "./clientSettings";

export interface StateStore {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): PromiseLike<void>;
}

const STATE_KEY = "bonsai.sessionId";

export class Sessions {
  private current: string | undefined;
  private pending: string | undefined;
  private readonly changed = new Emitter<string | undefined>();
  private readonly attached = new Emitter<SessionAttachResult>();
  readonly onDidChange = this.changed.event;
  /** Fires with the session's stored log whenever this window (re)attaches. */
  readonly onDidAttach = this.attached.event;

  constructor(
    private readonly rpc: Rpc,
    private readonly store: StateStore,
    readonly workspace: string,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.current = store.get<string>(STATE_KEY);
  }

  get sessionId(): string | undefined {
    return this.current;
  }

  /** All sessions: this workspace's first, then others, each newest first. */
  async list(): Promise<SessionOption[]> {
    const { sessions } = await this.rpc.request("bonsai/session/list", {});
    return sortSessions(sessions, this.workspace);
  }

  /** What this window sends as `client` (its environment's provider settings), if anything. */
  client(): ClientSettings | undefined {
    return clientSettings(this.env, `VS Code (pid ${process.pid})`);
  }

  async create(title?: string): Promise<string> {
    const client = this.client();
    const params = {
      workspace: this.workspace,
      ...(title === undefined ? {} : { title }),
      ...(client === undefined ? {} : { client }),
    };
    const { sessionId } = await this.rpc.request("bonsai/session/create", params);
    await this.attach(sessionId);
    return sessionId;
  }

  /** The current session, creating one for this workspace if there is none. */
  async ensure(): Promise<string> {
    return this.current ?? (await this.create());
  }

  /**
   * The session an attach is under way for, until its listeners have run: the
   * daemon sends the running turn's events so far before the attach answer, and
   * live ones may follow before it (the chat keeps them for the log it loads).
   */
  get attaching(): string | undefined {
    return this.pending;
  }

  async attach(sessionId: string): Promise<SessionAttachResult> {
    const previous = this.current;
    this.pending = sessionId;
    try {
      const result = await this.rpc.request("bonsai/session/attach", { sessionId });
      if (previous !== undefined && previous !== sessionId) {
        await this.rpc.request("bonsai/session/detach", { sessionId: previous }).catch(() => undefined);
      }
      await this.setCurrent(sessionId);
      this.attached.fire(result);
      return result;
    } finally {
      if (this.pending === sessionId) {
        this.pending = undefined;
      }
    }
  }

  /** After (re)connecting: re-attach the remembered session, forgetting it if it is gone. */
  async restore(): Promise<void> {
    const remembered = this.current;
    if (remembered === undefined) {
      this.changed.fire(undefined);
      return;
    }
    try {
      await this.attach(remembered);
    } catch {
      await this.setCurrent(undefined);
    }
  }

  /** The daemon reported this session deleted. */
  async forget(sessionId: string): Promise<void> {
    if (this.current === sessionId) {
      await this.setCurrent(undefined);
    }
  }

  private async setCurrent(sessionId: string | undefined): Promise<void> {
    this.current = sessionId;
    await this.store.update(STATE_KEY, sessionId);
    this.changed.fire(sessionId);
  }
}

export function sortSessions(sessions: readonly SessionInfo[], workspace: string): SessionOption[] {
  return [...sessions]
    .sort((a, b) => {
      const aHere = a.workspace === workspace ? 0 : 1;
      const bHere = b.workspace === workspace ? 0 : 1;
      return aHere - bHere || b.updatedAt - a.updatedAt || a.sessionId.localeCompare(b.sessionId);
    })
    .map((session) => ({
      sessionId: session.sessionId,
      title: session.title,
      workspace: session.workspace,
      messageCount: session.messageCount,
      foreign: session.workspace !== workspace,
    }));
}
