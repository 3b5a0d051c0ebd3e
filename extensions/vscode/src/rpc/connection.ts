/**
 * The daemon connection: a language client that runs `bonsai connect`, so every
 * window shares the user's one daemon. Owns start, restart and the state shown
 * in the status bar; the daemon's stderr lands in the "bonsai" output channel.
 */
import * as vscode from "vscode";
import {
  CloseAction,
  type CloseHandlerResult,
  ErrorAction,
  type ErrorHandlerResult,
  LanguageClient,
  type LanguageClientOptions,
  RevealOutputChannelOn,
  type ServerOptions,
} from "vscode-languageclient/node";
import type { NotificationMap } from "../protocol.generated";
import { Emitter, type Disposable } from "../util/emitter";
import { errorText } from "../util/format";
import { NotificationHub } from "./hub";
import { accessSync, constants } from "node:fs";
import { spawnSync } from "node:child_process";
import { type Launch, launchFromSettings } from "./launch";
import { locate } from "./locate";
import { RestartPolicy } from "./restartPolicy";
import { notConnected, settled, StderrTail, startFailureReason } from "./startFailure";
import { createInterface } from "node:readline";
import type {
  ConnectionState,
  NotificationMethod,
  Params,
  RequestMethod,
  Result,
  Rpc,
  ServerRequestHandler,
  ServerRequestMethod,
} from "./rpc";

export class DaemonConnection implements Rpc {
  private client: LanguageClient | undefined;
  private current: ConnectionState = { kind: "stopped", reason: "not started" };
  private readonly states = new Emitter<ConnectionState>();
  private readonly policy = new RestartPolicy();
  private readonly hub = new NotificationHub((method, kind) => this.bind(method, kind));
  private readonly bindings: Disposable[] = [];
  private generation = 0;
  /** The bridge this generation started, and the last lines it wrote on stderr. */
  private launched: { launch: Launch; stderr: StderrTail } | undefined;

  constructor(private readonly output: vscode.LogOutputChannel) {}

  get state(): ConnectionState {
    return this.current;
  }

  onDidChangeState(listener: (state: ConnectionState) => void): Disposable {
    return this.states.event(listener);
  }

  /** A request made while bonsai starts (its first start takes seconds) waits for it. */
  async request<M extends RequestMethod>(method: M, params: Params<M>): Promise<Result<M>> {
    await settled(
      () => this.current,
      (listener) => this.onDidChangeState(listener),
      START_WAIT_MS,
    );
    const client = this.client;
    if (client === undefined || this.current.kind !== "running") {
      throw new Error(notConnected(this.current));
    }
    return client.sendRequest<Result<M>>(method, params);
  }

  onNotification<N extends NotificationMethod>(method: N, handler: (params: NotificationMap[N]) => void): Disposable {
    return this.hub.subscribe(method, handler as (params: unknown) => void);
  }

  onServerRequest<R extends ServerRequestMethod>(method: R, handler: ServerRequestHandler<R>): Disposable {
    return this.hub.handleRequests(method, handler as never);
  }

  /** Start (or restart) the bridge with the current settings. */
  async start(): Promise<void> {
    await this.stopClient();
    const generation = ++this.generation;
    this.setState({ kind: "starting" });
    let client: LanguageClient;
    try {
      client = this.createClient(generation);
    } catch (error) {
      this.setState({ kind: "failed", reason: errorText(error) });
      return;
    }
    this.client = client;
    this.bindAll();
    try {
      await client.start();
    } catch (error) {
      if (generation === this.generation) {
        this.output.error(`bonsai: could not start the daemon bridge: ${errorText(error)}`);
        const launched = this.launched;
        const reason =
          launched === undefined
            ? errorText(error)
            : startFailureReason(launched.launch, launched.stderr.lines, errorText(error));
        this.setState({ kind: "failed", reason });
      }
      return;
    }
    if (generation === this.generation) {
      const version = client.initializeResult?.serverInfo?.version;
      this.setState({ kind: "running", version });
    }
  }

  async restart(): Promise<void> {
    this.policy.reset();
    await this.start();
  }

  async dispose(): Promise<void> {
    this.generation++;
    await this.stopClient();
    this.states.dispose();
  }

  private createClient(generation: number): LanguageClient {
    const launch = this.launch();
    const stderr = new StderrTail();
    this.launched = { launch, stderr };
    this.output.info(`starting: ${launch.command} ${launch.args.join(" ")}`);
    // No `transport`: with TransportKind.stdio the client would append `--stdio`.
    const serverOptions: ServerOptions = {
      command: launch.command,
      args: launch.args,
      options: { env: { ...process.env } },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [],
      outputChannel: this.output,
      // the later chat event kinds this extension shows (else the daemon sends the older shape)
      initializationOptions: { client: "vscode", chatEventKinds: ["cancelled"] },
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      // As the client's default (each line to the output channel), and stderr's last lines kept for the failure message.
      stdioOptions: {
        stdout: (input, channel) => lines(input, (line) => channel.info(line)),
        stderr: (input, channel) =>
          lines(input, (line) => {
            channel.error(line);
            stderr.add(line);
          }),
      },
      // Failures surface once, through the state change (status chip + one notification).
      initializationFailedHandler: (error) => {
        this.output.error(`bonsai: initialize failed: ${errorText(error)}`);
        return false;
      },
      errorHandler: {
        error: (): ErrorHandlerResult => ({ action: ErrorAction.Continue, handled: true }),
        closed: (): CloseHandlerResult => this.onClosed(generation),
      },
    };
    return new LanguageClient("bonsai", "bonsai", serverOptions, clientOptions);
  }

  /** Where bonsai was found when `bonsai.command` is not set (for the status tooltip). */
  foundAt: string | undefined;

  /** `bonsai.command` when the user set it; else the first bonsai in the usual places. */
  private launch(): Launch {
    const config = vscode.workspace.getConfiguration("bonsai");
    const set = config.inspect<string>("command");
    const explicit = [set?.globalValue, set?.workspaceValue, set?.workspaceFolderValue].some((v) => v !== undefined);
    if (explicit || (config.get<string[]>("args") ?? []).length > 0) {
      this.foundAt = undefined;
      return launchFromSettings(config.get("command"), config.get("args"));
    }
    const workspace = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const { found, tried } = locate(workspace, vscode.workspace.isTrusted, {
      env: process.env,
      isExecutable: (path) => {
        try {
          accessSync(path, constants.X_OK);
          return true;
        } catch {
          return false;
        }
      },
      pythonHasBonsai: (python) =>
        spawnSync(python, ["-P", "-c", "import bonsai"], { stdio: "ignore", timeout: 10_000 }).status === 0,
    });
    if (found === undefined) {
      throw new Error(
        `the bonsai executable was not found (looked at ${tried.join(", ")}): install bonsai or set bonsai.command`,
      );
    }
    this.foundAt = found.how;
    this.output.info(`bonsai.command is not set: using ${found.how}`);
    return found;
  }

  private onClosed(generation: number): CloseHandlerResult {
    if (generation !== this.generation || this.current.kind === "starting") {
      // A bridge that closes before it ran failed to start: start() says why; restarting repeats it.
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    if (this.policy.shouldRestart(Date.now())) {
      this.output.warn("bonsai: the daemon connection closed; reconnecting");
      this.setState({ kind: "starting" });
      queueMicrotask(() => void this.start());
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    const reason = "the daemon connection keeps closing (see the bonsai output)";
    this.setState({ kind: "failed", reason });
    return { action: CloseAction.DoNotRestart, handled: true };
  }

  private bindAll(): void {
    for (const method of this.hub.notificationMethods()) {
      this.bind(method, "notification");
    }
    for (const method of this.hub.requestMethods()) {
      this.bind(method, "request");
    }
  }

  private bind(method: string, kind: "notification" | "request"): void {
    const client = this.client;
    if (client === undefined) {
      return;
    }
    if (kind === "notification") {
      this.bindings.push(client.onNotification(method, (params: unknown) => this.hub.dispatch(method, params)));
      return;
    }
    this.bindings.push(
      client.onRequest(method, (params: unknown, token: vscode.CancellationToken) => {
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        return this.hub.answer(method, params, abort.signal);
      }),
    );
  }

  private async stopClient(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    for (const binding of this.bindings.splice(0)) {
      binding.dispose();
    }
    if (client === undefined) {
      return;
    }
    try {
      await client.dispose(2_000);
    } catch (error) {
      this.output.warn(`bonsai: stopping the old connection: ${errorText(error)}`);
    }
  }

  private setState(state: ConnectionState): void {
    this.current = state;
    this.states.fire(state);
  }
}

/** How long a request waits for a starting bridge (a first start builds the daemon's caches). */
const START_WAIT_MS = 60_000;

function lines(input: NodeJS.ReadableStream, each: (line: string) => void): void {
  createInterface({ input, crlfDelay: Infinity, terminal: false, historySize: 0 }).on("line", each);
}
