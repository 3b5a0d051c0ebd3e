/**
 * Stop while a reply streams and another message waits behind it: the streaming turn
 * ends as cancelled and the waiting message is answered next, once (real daemon,
 * real simulator).
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatController } from "../../src/chat/chatController";
import type { Entry } from "../../src/chat/entries";
import type { ToWebview } from "../../src/chat/messages";
import { Sessions } from "../../src/session/sessions";
import { MemoryStore, RecordingPort } from "../support/chatWindow";
import { DaemonRpc, Simulator, tempHome } from "../support/daemonRpc";

const LONG_REPLY = Array.from({ length: 200 }, (_, index) => `w${index + 1}`).join(" ") + " end-of-reply";
const SECOND_REPLY = "Reply to the second question.";

function assistantTexts(entries: readonly Entry[]): string[] {
  return entries.flatMap((entry) => (entry.kind === "assistant" ? [entry.text] : []));
}

const shows =
  (text: string) =>
  (message: ToWebview): boolean =>
    message.type === "upsert" &&
    message.entries.some((entry) => entry.kind === "assistant" && entry.text.includes(text));

describe("stop with a message waiting behind the streaming reply", () => {
  const home = tempHome();
  const workspace = join(tempHome(), "project");
  let sim: Simulator;
  let rpc: DaemonRpc;

  beforeAll(async () => {
    mkdirSync(workspace, { recursive: true });
    sim = await Simulator.start({ latency_ms: 35, steps: [{ text: LONG_REPLY }, { text: SECOND_REPLY }] }, home);
    rpc = await DaemonRpc.start(home);
  }, 30_000);

  afterAll(async () => {
    await rpc.close(true);
    sim.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it("cancels the streaming turn, not the waiting one, which is answered next", async () => {
    const env = { BONSAI_PROVIDER: "sim", BONSAI_BASE_URL: sim.baseUrl, BONSAI_MODEL: "gpt-4o-mini" };
    const sessions = new Sessions(rpc, new MemoryStore(), workspace, env);
    const controller = new ChatController(rpc, sessions, { reveal: () => undefined, revealChat: () => undefined });
    controller.subscribe();
    const port = new RecordingPort();
    controller.attachPort(port);
    await controller.handle({ type: "newSession" });
    await controller.handle({ type: "send", text: "the first question" });
    await port.next(shows("w10 "));
    await controller.handle({ type: "send", text: "the second question" }); // waits behind it
    await controller.handle({ type: "cancel" });
    await port.next(shows(SECOND_REPLY));
    await port.next((message) => message.type === "busy" && !message.busy);
    const texts = assistantTexts(controller.entries);
    expect(texts).toHaveLength(2);
    expect(texts[0]).toMatch(/^w1 w2 /);
    expect(texts[0]).not.toContain("end-of-reply"); // cut where it was cancelled
    expect(texts[1]).toBe(SECOND_REPLY);
    const notices = controller.entries.filter((entry) => entry.kind === "notice");
    expect(notices.map((entry) => (entry.kind === "notice" ? entry.markdown : "")).join("\n")).toMatch(/cancelled/);
    const users = controller.entries.filter((entry) => entry.kind === "user");
    expect(users).toHaveLength(2);
  }, 30_000);
});
