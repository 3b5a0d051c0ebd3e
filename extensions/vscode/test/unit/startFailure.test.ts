import { describe, expect, it } from "vitest";
import type { ConnectionState } from "../../src/rpc/rpc";
import { notConnected, settled, StderrTail, startFailureReason } from "../../src/rpc/startFailure";
import { Emitter } from "../../src/util/emitter";

const python = { command: "/usr/bin/python3", args: ["-m", "bonsai", "connect"] };
const DISPOSED = "Pending response rejected since connection got disposed";

describe("why the bridge did not start", () => {
  it("names a Python without bonsai and the setting to change, not the client's words", () => {
    const reason = startFailureReason(python, ["/usr/bin/python3: No module named bonsai"], DISPOSED);
    expect(reason).toBe(
      '/usr/bin/python3 has no bonsai installed (`/usr/bin/python3 -m bonsai connect` said "No module named bonsai"): ' +
        'set bonsai.command to the bonsai executable (or to a Python where bonsai is installed), then run "bonsai: Restart"',
    );
  });

  it("quotes the bridge's last line when it stopped for another reason", () => {
    const tail = new StderrTail();
    for (const line of [
      "Traceback (most recent call last):",
      "  ...",
      "bonsai connect: the daemon did not start",
      "",
    ]) {
      tail.add(line);
    }
    const reason = startFailureReason({ command: "bonsai", args: ["connect"] }, tail.lines, DISPOSED);
    expect(reason).toBe(
      "`bonsai connect` stopped: bonsai connect: the daemon did not start (more in the bonsai output). " +
        'Fix it or bonsai.command / bonsai.args, then run "bonsai: Restart"',
    );
    expect(reason).not.toContain("Pending response");
  });

  it("says a missing executable is missing", () => {
    const reason = startFailureReason({ command: "bonsia", args: ["connect"] }, [], "spawn bonsia ENOENT");
    expect(reason).toMatch(/^bonsia was not found: install bonsai or set bonsai.command/);
  });

  it("keeps only the last lines of a long stderr", () => {
    const tail = new StderrTail();
    for (let index = 0; index < 500; index++) {
      tail.add(`line ${index}`);
    }
    expect(tail.lines).toHaveLength(20);
    expect(tail.lines.at(-1)).toBe("line 499");
  });
});

describe("a request made while bonsai starts", () => {
  it("waits until the connection runs", async () => {
    let state: ConnectionState = { kind: "starting" };
    const changes = new Emitter<ConnectionState>();
    let waited = false;
    const wait = settled(() => state, changes.event, 60_000).then(() => (waited = true));
    await Promise.resolve();
    expect(waited).toBe(false);
    state = { kind: "running", version: "0.1.0" };
    changes.fire(state);
    await wait;
    expect(waited).toBe(true);
  });

  it("gives up after its timeout and says bonsai is still starting", async () => {
    const changes = new Emitter<ConnectionState>();
    await settled(() => ({ kind: "starting" }), changes.event, 10);
    expect(notConnected({ kind: "starting" })).toMatch(/still starting/);
    expect(notConnected({ kind: "failed", reason: "no bonsai" })).toBe(
      'bonsai is not connected: no bonsai. Run "bonsai: Restart" (see the bonsai output).',
    );
  });
});
