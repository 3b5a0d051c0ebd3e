/**
 * A second window that opens a session while a turn streams in the first: it
 * shows the turn from its start, each reply and tool call once (real daemon,
 * real simulator, two connections as two VS Code windows).
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ChatController } from "../../src/chat/chatController";
import type { Entry } from "../../src/chat/entries";
import type { Disposable } from "../../src/util/emitter";
import type { ToWebview } from "../../src/chat/messages";
import { Sessions } from "../../src/session/sessions";
import { MemoryStore, RecordingPort } from "../support/chatWindow";
import { DaemonRpc, Simulator, tempHome } from "../support/daemonRpc";

const words = (stem: string, count: number): string =>
  Array.from({ length: count }, (_, index) => `${stem}${index + 1}`).join(" ");
/** Long replies, streamed a word every 40 ms, so that the second window opens mid-stream. */
const PLAIN_REPLY = `Plain reply: ${words("alpha", 60)}.`;
const FIRST_STEP = "Looking for the notes first.";
const SECOND_STEP = `Tool reply: ${words("beta", 60)}.`;

function assistantTexts(entries: readonly Entry[]): string[] {
  return entries.flatMap((entry) => (entry.kind === "assistant" ? [entry.text] : []));
}

function hasAssistant(text: string): (message: ToWebview) => boolean {
  return (message) =>
    message.type === "upsert" &&
    message.entries.some((entry) => entry.kind === "assistant" && entry.text.includes(text));
}

const turnDone = (message: ToWebview): boolean => message.type === "busy" && !message.busy;

describe("a window opened mid-turn", () => {
  const home = tempHome();
  const workspace = join(tempHome(), "project");
  let sim: Simulator;
  let first: DaemonRpc;
  let second: DaemonRpc;

  beforeAll(async () => {
    mkdirSync(workspace, { recursive: true });
    sim = await Simulator.start(
      {
        latency_ms: 40,
        steps: [
          { text: PLAIN_REPLY },
          { text: FIRST_STEP, tool_calls: [{ name: "glob", arguments: { pattern: "*.txt" } }] },
          { text: SECOND_STEP },
          { text: "Running it.", tool_calls: [{ name: "bash", arguments: { command: "echo late" } }] },
          { text: "It ran." },
        ],
      },
      home,
    );
    first = await DaemonRpc.start(home);
    second = await DaemonRpc.start(home);
  }, 30_000);

  afterAll(async () => {
    await second.close();
    await first.close(true);
    sim.stop();
    rmSync(home, { recursive: true, force: true });
  });

  const handlers: Disposable[] = [];
  afterEach(() => handlers.splice(0).forEach((handler) => handler.dispose()));

  function window(rpc: DaemonRpc): { controller: ChatController; sessions: Sessions; port: RecordingPort } {
    const env = { BONSAI_PROVIDER: "sim", BONSAI_BASE_URL: sim.baseUrl, BONSAI_MODEL: "gpt-4o-mini" };
    const sessions = new Sessions(rpc, new MemoryStore(), workspace, env);
    const controller = new ChatController(rpc, sessions, { reveal: () => undefined, revealChat: () => undefined });
    controller.subscribe();
    handlers.push(
      rpc.onServerRequest("bonsai/approval/request", (params, signal) => controller.requestApproval(params, signal)),
    );
    const port = new RecordingPort();
    controller.attachPort(port);
    return { controller, sessions, port };
  }

  /** Window 1 sends `text`; window 2 opens the session once window 1 shows `marker` streaming. */
  async function openMidTurn(text: string, marker: string) {
    const one = window(first);
    const two = window(second);
    await one.controller.handle({ type: "newSession" });
    await one.controller.handle({ type: "send", text });
    await one.port.next(hasAssistant(marker));
    await two.controller.handle({ type: "switchSession", sessionId: one.sessions.sessionId as string });
    const opened = assistantTexts(two.controller.entries);
    const stillStreaming = one.controller.entries.some((entry) => entry.kind === "assistant" && entry.streaming);
    expect(stillStreaming, "the turn ended before window 2 opened it: the test proves nothing").toBe(true);
    await one.port.next(turnDone);
    await two.port.next(turnDone);
    return { one, two, opened };
  }

  it("shows the reply streamed so far, from its first word", async () => {
    const { one, two, opened } = await openMidTurn("say something long", "alpha1 ");
    expect(opened).toHaveLength(1);
    expect(opened[0]).toMatch(/^Plain reply: alpha1 alpha2/);
    expect(PLAIN_REPLY.startsWith(opened[0] ?? "-")).toBe(true);
    expect(assistantTexts(two.controller.entries)).toEqual([PLAIN_REPLY]);
    expect(assistantTexts(one.controller.entries)).toEqual([PLAIN_REPLY]);
  }, 30_000);

  it("shows a step the turn already stored once, and the one streaming from its start", async () => {
    const { two, opened } = await openMidTurn("find the notes then say something long", "beta1 ");
    expect(opened).toHaveLength(2);
    expect(opened[0]).toBe(FIRST_STEP);
    expect(opened[1]).toMatch(/^Tool reply: beta1 beta2/);
    const tools = two.controller.entries.filter((entry) => entry.kind === "tool");
    expect(tools).toEqual([expect.objectContaining({ name: "glob", pending: false })]);
    expect(assistantTexts(two.controller.entries)).toEqual([FIRST_STEP, SECOND_STEP]);
  }, 30_000);

  it("shows an approval that waits, and takes its answer", async () => {
    const one = window(first);
    const two = window(second);
    await one.controller.handle({ type: "newSession" });
    const sessionId = one.sessions.sessionId as string;
    await one.controller.handle({ type: "send", text: "run the late check" });
    const pending = (message: ToWebview): boolean =>
      message.type === "upsert" && message.entries.some((entry) => entry.kind === "approval");
    await one.port.next(pending);
    await two.controller.handle({ type: "switchSession", sessionId });
    await two.port.next(pending);
    const card = two.controller.entries.find((entry) => entry.kind === "approval");
    expect(card).toMatchObject({ state: "pending", command: "echo late" });
    await two.controller.handle({ type: "approval", id: String(card?.key).replace("approval:", ""), approved: true });
    await one.port.next(turnDone);
    expect(one.controller.entries.find((entry) => entry.kind === "approval")).toMatchObject({
      state: "approved",
      verdict: expect.stringMatching(/^Approved in /),
    });
    expect(assistantTexts(one.controller.entries)).toEqual(["Running it.", "It ran."]);
  }, 30_000);
});
