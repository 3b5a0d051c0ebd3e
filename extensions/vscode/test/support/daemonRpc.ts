/**
 * A real daemon for tests: `bonsai connect` in a temp BONSAI_HOME, wrapped in the
 * extension's own Rpc interface over vscode-jsonrpc (what the language client
 * does inside VS Code), so controllers run against the real thing.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type MessageConnection,
} from "vscode-jsonrpc/node";
import type { NotificationMap } from "../../src/protocol.generated";
import { NotificationHub } from "../../src/rpc/hub";
import type {
  ConnectionState,
  NotificationMethod,
  Params,
  RequestMethod,
  Result,
  Rpc,
  ServerRequestHandler,
  ServerRequestMethod,
} from "../../src/rpc/rpc";
import type { Disposable } from "../../src/util/emitter";

/** The bonsai executable: $BONSAI_E2E_BONSAI, else the repository's virtualenv. */
export function bonsaiExecutable(): string {
  const candidate = process.env.BONSAI_E2E_BONSAI ?? resolve(__dirname, "../../../../.venv/bin/bonsai");
  if (!existsSync(candidate)) {
    throw new Error(
      `no bonsai executable at ${candidate}: create the virtualenv (./run test) or set BONSAI_E2E_BONSAI`,
    );
  }
  return candidate;
}

export function tempHome(): string {
  return mkdtempSync(join(tmpdir(), "bonsai-vitest-"));
}

export class DaemonRpc implements Rpc {
  readonly state: ConnectionState = { kind: "running", version: undefined };
  private readonly hub: NotificationHub;

  private constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    private readonly connection: MessageConnection,
  ) {
    this.hub = new NotificationHub((method, kind) => {
      if (kind === "notification") {
        connection.onNotification(method, (params: unknown) => this.hub.dispatch(method, params));
      } else {
        connection.onRequest(method, (params: unknown) =>
          this.hub.answer(method, params, new AbortController().signal),
        );
      }
    });
  }

  static async start(home: string): Promise<DaemonRpc> {
    const env = { ...process.env, BONSAI_HOME: home };
    const child = spawn(bonsaiExecutable(), ["connect"], { env, stdio: ["pipe", "pipe", "pipe"] });
    const connection = createMessageConnection(
      new StreamMessageReader(child.stdout),
      new StreamMessageWriter(child.stdin),
    );
    connection.listen();
    await connection.sendRequest("initialize", { processId: process.pid, rootUri: null, capabilities: {} });
    await connection.sendNotification("initialized", {});
    return new DaemonRpc(child, connection);
  }

  request<M extends RequestMethod>(method: M, params: Params<M>): Promise<Result<M>> {
    return this.connection.sendRequest<Result<M>>(method, params);
  }

  onNotification<N extends NotificationMethod>(method: N, handler: (params: NotificationMap[N]) => void): Disposable {
    return this.hub.subscribe(method, handler as (params: unknown) => void);
  }

  onServerRequest<R extends ServerRequestMethod>(method: R, handler: ServerRequestHandler<R>): Disposable {
    return this.hub.handleRequests(method, handler as never);
  }

  onDidChangeState(): Disposable {
    return { dispose: () => undefined };
  }

  /** Close this client; `stopDaemon` also stops the daemon it shares with other clients. */
  async close(stopDaemon = false): Promise<void> {
    if (stopDaemon) {
      await this.connection.sendRequest("bonsai/daemon/stop", {}).catch(() => undefined);
    }
    this.connection.dispose();
    this.child.stdin.end();
    this.child.kill();
  }
}

/** `bonsai sim` on a free port with a script (server/bonsai/sim/script.py), until stopped. */
export class Simulator {
  private constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    /** The OpenAI base URL (what BONSAI_BASE_URL takes). */
    readonly baseUrl: string,
  ) {}

  static async start(script: object, dir: string): Promise<Simulator> {
    const path = join(dir, "sim-script.json");
    writeFileSync(path, JSON.stringify(script));
    const child = spawn(bonsaiExecutable(), ["sim", "--port", "0", "--script", path]);
    const baseUrl = await new Promise<string>((resolveUrl, reject) => {
      let seen = "";
      child.stdout.on("data", (chunk: Buffer) => {
        seen += chunk.toString();
        const match = /OpenAI base URL (\S+?)[,)]/.exec(seen);
        if (match?.[1] !== undefined) {
          resolveUrl(match[1]);
        }
      });
      child.stderr.on("data", (chunk: Buffer) => (seen += chunk.toString()));
      child.once("exit", (code) => reject(new Error(`bonsai sim exited with ${code}: ${seen}`)));
    });
    return new Simulator(child, baseUrl);
  }

  stop(): void {
    this.child.kill();
  }
}
