/**
 * code-server for the e2e: a fresh user-data and extensions dir, the built
 * .vsix installed, served on 127.0.0.1 with no auth. Started under `setsid` so
 * stop() can kill its whole process group (extension host, bonsai connect …).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createWriteStream, mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";

export interface CodeServerOptions {
  /** The code-server executable (a node script: node 24 must come first on PATH). */
  bin: string;
  vsix: string;
  /** A fresh temp dir for user data, extensions, config and logs. */
  root: string;
  env: NodeJS.ProcessEnv;
  settings: Record<string, unknown>;
}

export interface RunningCodeServer {
  url: string;
  pid: number;
  log: string;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  server.close();
  if (address === null || typeof address === "string") {
    throw new Error("could not pick a free port");
  }
  return address.port;
}

function dirs(root: string): { userData: string; extensions: string; config: string } {
  const userData = join(root, "user-data");
  const extensions = join(root, "extensions");
  mkdirSync(join(userData, "User"), { recursive: true });
  mkdirSync(extensions, { recursive: true });
  return { userData, extensions, config: join(root, "code-server.yaml") };
}

/** Run a command to completion, failing with its output. */
async function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const [code] = (await once(child, "exit")) as [number | null];
  if (code !== 0) {
    throw new Error(`${command} ${args.join(" ")} exited with ${code}:\n${output}`);
  }
  return output;
}

export async function installExtension(options: CodeServerOptions): Promise<void> {
  const { userData, extensions } = dirs(options.root);
  // User settings for the workbench; "Machine" (remote) settings for machine-scoped ones
  // such as bonsai.command, which a remote window reads only from there.
  const settings = JSON.stringify(options.settings, null, 2);
  writeFileSync(join(userData, "User", "settings.json"), settings);
  mkdirSync(join(userData, "Machine"), { recursive: true });
  writeFileSync(join(userData, "Machine", "settings.json"), settings);
  const output = await run(
    options.bin,
    ["--user-data-dir", userData, "--extensions-dir", extensions, "--install-extension", options.vsix],
    options.env,
  );
  if (!/was successfully installed/.test(output)) {
    throw new Error(`installing ${options.vsix} did not succeed:\n${output}`);
  }
}

export async function startCodeServer(options: CodeServerOptions, workspace: string): Promise<RunningCodeServer> {
  const { userData, extensions, config } = dirs(options.root);
  const port = await freePort();
  writeFileSync(config, `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
  const log = join(options.root, "code-server.log");
  const args = [
    options.bin,
    "--config",
    config,
    "--bind-addr",
    `127.0.0.1:${port}`,
    "--auth",
    "none",
    "--user-data-dir",
    userData,
    "--extensions-dir",
    extensions,
    "--disable-telemetry",
    "--disable-update-check",
    "--disable-workspace-trust",
    "--disable-getting-started-override",
    workspace,
  ];
  const child = spawn("setsid", args, { env: options.env, stdio: ["ignore", "pipe", "pipe"] });
  const pid = child.pid;
  if (pid === undefined) {
    throw new Error("code-server did not start (setsid missing?)");
  }
  writeFileSync(join(options.root, "code-server.pid"), String(pid));
  const stop = (): Promise<void> => killGroup(child, pid);
  try {
    await waitForListening(child, log);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `http://127.0.0.1:${port}/`, pid, log, stop };
}

/** Resolve when code-server logs that it listens; tee its output to the log file. */
function waitForListening(child: ChildProcess, log: string): Promise<void> {
  const sink = createWriteStream(log);
  child.stdout?.pipe(sink);
  child.stderr?.pipe(sink);
  return new Promise((resolve, reject) => {
    let seen = "";
    const timer = setTimeout(() => reject(new Error(`code-server did not start listening in 60 s:\n${seen}`)), 60_000);
    child.stdout?.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      if (/HTTP server listening on/.test(seen)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`code-server exited early with ${code}:\n${seen}`));
    });
  });
}

/** SIGTERM the process group, SIGKILL it if it is still there after 5 s. */
async function killGroup(child: ChildProcess, pid: number): Promise<void> {
  const exited =
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve()
      : once(child, "exit").then(() => undefined);
  const signal = (name: NodeJS.Signals): void => {
    try {
      process.kill(-pid, name);
    } catch {
      // The group is already gone.
    }
  };
  signal("SIGTERM");
  const timer = setTimeout(() => signal("SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
  signal("SIGKILL");
}
