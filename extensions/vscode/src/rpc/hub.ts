/**
 * Fan-out of daemon notifications and server requests to the views.
 *
 * The hub outlives any one language client: after a restart the connection
 * re-binds the new client to the same hub, so views subscribe exactly once.
 */
import type { Disposable } from "../util/emitter";

type Handler = (params: unknown) => void;
type RequestHandler = (params: unknown, signal: AbortSignal) => Promise<unknown>;

export class NotificationHub {
  private readonly handlers = new Map<string, Set<Handler>>();
  private readonly requestHandlers = new Map<string, RequestHandler>();
  private readonly onNewMethod: (method: string, kind: "notification" | "request") => void;

  constructor(onNewMethod: (method: string, kind: "notification" | "request") => void) {
    this.onNewMethod = onNewMethod;
  }

  subscribe(method: string, handler: Handler): Disposable {
    let set = this.handlers.get(method);
    if (set === undefined) {
      set = new Set();
      this.handlers.set(method, set);
      this.onNewMethod(method, "notification");
    }
    set.add(handler);
    return { dispose: () => set.delete(handler) };
  }

  /** One handler per server request method: the first answer goes back to the daemon. */
  handleRequests(method: string, handler: RequestHandler): Disposable {
    if (this.requestHandlers.has(method)) {
      throw new Error(`a handler for ${method} is already registered`);
    }
    this.requestHandlers.set(method, handler);
    this.onNewMethod(method, "request");
    return { dispose: () => this.requestHandlers.delete(method) };
  }

  notificationMethods(): string[] {
    return [...this.handlers.keys()];
  }

  requestMethods(): string[] {
    return [...this.requestHandlers.keys()];
  }

  dispatch(method: string, params: unknown): void {
    for (const handler of [...(this.handlers.get(method) ?? [])]) {
      try {
        handler(params);
      } catch (error) {
        console.error(`bonsai: handler for ${method} failed`, error);
      }
    }
  }

  answer(method: string, params: unknown, signal: AbortSignal): Promise<unknown> {
    const handler = this.requestHandlers.get(method);
    if (handler === undefined) {
      return Promise.reject(new Error(`no handler for ${method}`));
    }
    return handler(params, signal);
  }
}
