/**
 * End-to-end test of the bonsai extension in a real VS Code (code-server),
 * driven by headless Chromium through playwright-core, against the real
 * daemon and the provider simulator. Prints one JSON line per step and a
 * summary; exits non-zero when a step fails.
 *
 * Inputs (environment; tests/editors/test_vscode_e2e.py sets them):
 *   BONSAI_E2E_CODE_SERVER  code-server executable
 *   BONSAI_E2E_VSIX         the packaged extension
 *   BONSAI_E2E_BONSAI       the bonsai executable (bonsai.command)
 *   BONSAI_E2E_ROOT         a fresh temp dir (workspace, user data, logs)
 *   BONSAI_E2E_ARTIFACTS    where screenshots go
 *   BONSAI_E2E_MESSAGE      the chat message to send
 *   BONSAI_E2E_REPLY        text the streamed reply must contain
 *   BONSAI_HOME, BONSAI_PROVIDER, BONSAI_BASE_URL  passed to the daemon
 */
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { installExtension, startCodeServer, type RunningCodeServer } from "./codeServer.mts";
import { DaemonClient } from "./daemonClient.mts";
import { MEMORY_ENTRY } from "./sharedSteps.mts";
import { STEPS, type StepContext } from "./steps.mts";
import { DEFAULT_WAIT_MS } from "./workbench.mts";

/** A headless Neovim with the bonsai plugin, listening on a socket the steps drive. */
function startNeovim(
  bin: string,
  root: string,
  workspace: string,
  env: NodeJS.ProcessEnv,
): { child: ChildProcess; socket: string } {
  const socket = join(root, "nvim.sock");
  const plugin = join(import.meta.dirname, "..", "..", "neovim");
  const child = spawn(
    bin,
    [
      "--headless",
      "--listen",
      socket,
      "-u",
      "NONE",
      "-i",
      "NONE",
      "-n",
      "--cmd",
      `set rtp^=${plugin}`,
      "-c",
      "runtime plugin/bonsai.lua",
    ],
    { cwd: workspace, env, stdio: "ignore" },
  );
  return { child, socket };
}

async function waitForSocket(socket: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!existsSync(socket)) {
    if (Date.now() > deadline) {
      throw new Error(`Neovim did not listen on ${socket}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === "") {
    throw new Error(`environment variable ${name} is required`);
  }
  return value;
}

const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

interface StepResult {
  step: string;
  ok: boolean;
  ms: number;
  detail: string;
}

function report(result: StepResult): void {
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

async function runSteps(context: StepContext): Promise<StepResult[]> {
  const results: StepResult[] = [];
  let blocked: string | undefined;
  for (const [index, step] of STEPS.entries()) {
    const started = Date.now();
    if (blocked !== undefined) {
      results.push({ step: step.name, ok: false, ms: 0, detail: `not run: ${blocked} failed` });
      report(results.at(-1) as StepResult);
      continue;
    }
    const shot = join(context.artifacts, `${String(index + 1).padStart(2, "0")}-${step.name}.png`);
    try {
      const detail = await step.run(context);
      await context.page.screenshot({ path: shot });
      results.push({ step: step.name, ok: true, ms: Date.now() - started, detail });
    } catch (error) {
      await context.page.screenshot({ path: shot.replace(".png", "-FAILED.png") }).catch(() => undefined);
      const message = error instanceof Error ? error.message.split("\n").slice(0, 6).join(" ") : String(error);
      results.push({ step: step.name, ok: false, ms: Date.now() - started, detail: message });
      blocked = step.name;
    }
    report(results.at(-1) as StepResult);
  }
  return results;
}

async function main(): Promise<number> {
  const root = required("BONSAI_E2E_ROOT");
  const artifacts = required("BONSAI_E2E_ARTIFACTS");
  const bonsai = required("BONSAI_E2E_BONSAI");
  const workspace = join(root, "workspace");
  mkdirSync(workspace, { recursive: true });
  mkdirSync(artifacts, { recursive: true });
  // First start without bonsai.command: the extension must find the workspace's .venv.
  mkdirSync(join(workspace, ".venv", "bin"), { recursive: true });
  copyFileSync(bonsai, join(workspace, ".venv", "bin", "bonsai"));
  chmodSync(join(workspace, ".venv", "bin", "bonsai"), 0o755);
  mkdirSync(join(workspace, ".bonsai", "memory"), { recursive: true });
  writeFileSync(join(workspace, ".bonsai", "memory", "cart-tests.md"), MEMORY_ENTRY);
  const env = { ...process.env };
  const options = {
    bin: required("BONSAI_E2E_CODE_SERVER"),
    vsix: required("BONSAI_E2E_VSIX"),
    root,
    env,
    settings: {
      "workbench.startupEditor": "none",
      "files.autoSave": "off", // the approval step keeps unsaved changes in notes.txt
      "workbench.tips.enabled": false,
      "workbench.secondarySideBar.defaultVisibility": "hidden",
      "chat.disableAIFeatures": true,
      "telemetry.telemetryLevel": "off",
      "extensions.autoCheckUpdates": false,
      "extensions.autoUpdate": false,
    },
  };
  let server: RunningCodeServer | undefined;
  let browser: BrowserContext | undefined;
  let daemon: DaemonClient | undefined;
  let nvim: { child: ChildProcess; socket: string } | undefined;
  const extraPages: Page[] = [];
  try {
    await installExtension(options);
    server = await startCodeServer(options, workspace);
    // A fresh Chromium profile in the run's temp dir; Debian's chromium, never a downloaded one.
    browser = await chromium.launchPersistentContext(join(root, "chromium-profile"), {
      executablePath: process.env.BONSAI_E2E_CHROMIUM ?? "/usr/bin/chromium",
      args: CHROMIUM_ARGS,
      viewport: { width: 1400, height: 900 },
    });
    const page = browser.pages()[0] ?? (await browser.newPage());
    page.setDefaultTimeout(DEFAULT_WAIT_MS);
    daemon = await DaemonClient.connect(bonsai, [], env);
    const nvimBin = process.env.BONSAI_E2E_NVIM;
    if (nvimBin) {
      nvim = startNeovim(nvimBin, root, workspace, env);
      await waitForSocket(nvim.socket);
    }
    const results = await runSteps({
      page,
      url: server.url,
      root,
      workspace,
      extraPages,
      ...(nvim && nvimBin ? { nvim: { bin: nvimBin, socket: nvim.socket } } : {}),
      artifacts,
      daemon,
      message: process.env.BONSAI_E2E_MESSAGE ?? "hello bonsai",
      reply: process.env.BONSAI_E2E_REPLY ?? "You said: hello bonsai",
    });
    const passed = results.filter((result) => result.ok).length;
    process.stdout.write(`${passed} passed, ${results.length - passed} failed\n`);
    return passed === results.length ? 0 : 1;
  } finally {
    nvim?.child.kill("SIGKILL");
    for (const extra of extraPages) {
      await extra.close().catch(() => undefined);
    }
    daemon?.close();
    await browser?.close().catch(() => undefined);
    await server?.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `e2e driver failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(2);
  },
);
