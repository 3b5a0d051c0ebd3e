/**
 * Why the daemon bridge did not start, in words a user can act on: the command
 * that ran, the last thing it said on stderr, and what to change. Pure, so the
 * wording is unit-tested; the connection feeds it the bridge's stderr.
 */
import type { Launch } from "./launch";
import type { ConnectionState } from "./rpc";

const KEPT_LINES = 20;

/** The last lines a process wrote on stderr (the bridge's, for the failure message). */
export class StderrTail {
  private readonly kept: string[] = [];

  add(line: string): void {
    if (line.trim() === "") {
      return;
    }
    this.kept.push(line.trim());
    if (this.kept.length > KEPT_LINES) {
      this.kept.shift();
    }
  }

  get lines(): readonly string[] {
    return this.kept;
  }
}

const RESTART = 'then run "bonsai: Restart"';

/** The bridge's start failed with `error` after writing `stderr`: what the status and the chat say. */
export function startFailureReason(launch: Launch, stderr: readonly string[], error: string): string {
  const commandLine = [launch.command, ...launch.args].join(" ");
  if (/ENOENT/.test(error)) {
    return `${launch.command} was not found: install bonsai or set bonsai.command to the bonsai executable, ${RESTART}`;
  }
  if (stderr.some((line) => /No module named '?bonsai\b/.test(line))) {
    return (
      `${launch.command} has no bonsai installed (\`${commandLine}\` said "No module named bonsai"): ` +
      `set bonsai.command to the bonsai executable (or to a Python where bonsai is installed), ${RESTART}`
    );
  }
  const said = stderr.at(-1);
  if (said !== undefined) {
    return `\`${commandLine}\` stopped: ${said} (more in the bonsai output). Fix it or bonsai.command / bonsai.args, ${RESTART}`;
  }
  return `\`${commandLine}\` did not start: ${error} (see the bonsai output)`;
}

/** What a request made while not connected fails with. */
export function notConnected(state: ConnectionState): string {
  if (state.kind === "starting") {
    return "bonsai is still starting (see the bonsai output); try again in a moment.";
  }
  const why = state.kind === "running" ? "" : `: ${state.reason}`;
  return `bonsai is not connected${why}. Run "bonsai: Restart" (see the bonsai output).`;
}

/** Resolves once `state()` is no longer "starting", or after `timeoutMs`. */
export function settled(
  state: () => ConnectionState,
  onChange: (listener: (state: ConnectionState) => void) => { dispose(): void },
  timeoutMs: number,
): Promise<void> {
  if (state().kind !== "starting") {
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      subscription.dispose();
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    const subscription = onChange((next) => next.kind !== "starting" && done());
  });
}
