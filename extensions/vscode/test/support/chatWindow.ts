/** What a chat panel's controller needs around it in tests: its state store and the webview. */
import type { ChatPort } from "../../src/chat/chatController";
import type { ToWebview } from "../../src/chat/messages";
import type { StateStore } from "../../src/session/sessions";

/** The window's memento, in memory. */
export class MemoryStore implements StateStore {
  private readonly values = new Map<string, unknown>();
  get<T>(key: string): T | undefined {
    return this.values.get(key) as T | undefined;
  }
  async update(key: string, value: unknown): Promise<void> {
    this.values.set(key, value);
  }
}

/** Records what the controller posts to the webview and waits for a matching message. */
export class RecordingPort implements ChatPort {
  readonly messages: ToWebview[] = [];
  private waiters: { predicate: (message: ToWebview) => boolean; resolve: (message: ToWebview) => void }[] = [];

  post(message: ToWebview): void {
    this.messages.push(message);
    this.waiters = this.waiters.filter((waiter) => {
      if (waiter.predicate(message)) {
        waiter.resolve(message);
        return false;
      }
      return true;
    });
  }

  /** The first message posted so far that matches, or the next one to. */
  next(predicate: (message: ToWebview) => boolean): Promise<ToWebview> {
    const seen = this.messages.find(predicate);
    return seen ? Promise.resolve(seen) : new Promise((resolve) => this.waiters.push({ predicate, resolve }));
  }
}
