/**
 * A second, independent client of the daemon (through `bonsai connect`), used
 * by the e2e to confirm what the UI shows against the daemon's own answer.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type MessageConnection,
} from "vscode-jsonrpc/node";

export class DaemonClient {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly connection: MessageConnection;
  readonly stderr: () => string;

  private constructor(child: ChildProcessWithoutNullStreams, connection: MessageConnection, stderr: () => string) {
    this.child = child;
    this.connection = connection;
    this.stderr = stderr;
  }

  static async connect(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<DaemonClient> {
    const child = spawn(command, [...args, "connect"], { env, stdio: ["pipe", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const connection = createMessageConnection(
      new StreamMessageReader(child.stdout),
      new StreamMessageWriter(child.stdin),
    );
    connection.listen();
    const client = new DaemonClient(child, connection, () => stderr);
    await connection.sendRequest("initialize", {
      processId: process.pid,
      rootUri: null,
      capabilities: {},
      initializationOptions: { client: "e2e" },
    });
    await connection.sendNotification("initialized", {});
    return client;
  }

  request<T>(method: string, params: unknown): Promise<T> {
    return this.connection.sendRequest<T>(method, params);
  }

  close(): void {
    this.connection.dispose();
    this.child.stdin.end();
    this.child.kill();
  }
}
