/**
 * The typed RPC surface every view and command uses. Method names and their
 * params/results come from the generated protocol file; nothing here knows
 * about vscode-languageclient, so the views can be exercised without VS Code.
 */
import type { NotificationMap, RequestMap, ServerRequestMap } from "../protocol.generated";
import type { Disposable } from "../util/emitter";

export type RequestMethod = keyof RequestMap;
export type Params<M extends RequestMethod> = RequestMap[M]["params"];
export type Result<M extends RequestMethod> = RequestMap[M]["result"];
export type NotificationMethod = keyof NotificationMap;
export type ServerRequestMethod = keyof ServerRequestMap;

export type ConnectionState =
  | { kind: "starting" }
  | { kind: "running"; version: string | undefined }
  | { kind: "stopped"; reason: string }
  | { kind: "failed"; reason: string };

export type ServerRequestHandler<R extends ServerRequestMethod> = (
  params: ServerRequestMap[R]["params"],
  signal: AbortSignal,
) => Promise<ServerRequestMap[R]["result"]>;

export interface Rpc {
  request<M extends RequestMethod>(method: M, params: Params<M>): Promise<Result<M>>;
  onNotification<N extends NotificationMethod>(method: N, handler: (params: NotificationMap[N]) => void): Disposable;
  onServerRequest<R extends ServerRequestMethod>(method: R, handler: ServerRequestHandler<R>): Disposable;
  /** Fires on every state change; `running` also after a restart (views then reload). */
  onDidChangeState(listener: (state: ConnectionState) => void): Disposable;
  readonly state: ConnectionState;
}
