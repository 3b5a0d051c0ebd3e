/** The chat panel's logic against a real daemon (no VS Code): sessions, events, slash commands. */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatController } from "../../src/chat/chatController";
import type { ToWebview } from "../../src/chat/messages";
import { Sessions } from "../../src/session/sessions";
import { MemoryStore, RecordingPort } from "../support/chatWindow";
import { DaemonRpc, tempHome } from "../support/daemonRpc";

describe("ChatController with a real daemon", () => {
  const home = tempHome();
  const projects = tempHome();
  /** A real folder: the daemon refuses a session in a workspace that is not one. */
  function project(name: string): string {
    const path = join(projects, name);
    mkdirSync(path, { recursive: true });
    return path;
  }
  let rpc: DaemonRpc;
  let other: DaemonRpc;

  beforeAll(async () => {
    rpc = await DaemonRpc.start(home);
    other = await DaemonRpc.start(home);
  }, 30_000);

  afterAll(async () => {
    await other.close();
    await rpc.close(true);
    rmSync(home, { recursive: true, force: true });
    rmSync(projects, { recursive: true, force: true });
  });

  function setup(workspace: string): { controller: ChatController; sessions: Sessions; port: RecordingPort } {
    const sessions = new Sessions(rpc, new MemoryStore(), workspace);
    const controller = new ChatController(rpc, sessions, { reveal: () => undefined, revealChat: () => undefined });
    controller.subscribe();
    const port = new RecordingPort();
    controller.attachPort(port);
    return { controller, sessions, port };
  }

  it("creates a session for the workspace and lists it as current", async () => {
    const { controller, sessions, port } = setup(project("alpha"));
    await controller.handle({ type: "newSession" });
    expect(sessions.sessionId).toMatch(/.+/);
    const listed = await port.next(
      (message) => message.type === "sessions" && message.currentId === sessions.sessionId,
    );
    expect(listed.type === "sessions" && listed.sessions.map((session) => session.workspace)).toContain(
      project("alpha"),
    );
  });

  it("shows a message another client appends to the session, once", async () => {
    const { controller, sessions, port } = setup(project("beta"));
    await controller.handle({ type: "newSession" });
    const sessionId = sessions.sessionId as string;
    await other.request("bonsai/session/attach", { sessionId });
    await other.request("bonsai/session/append", { sessionId, role: "user", content: "hello from the other window" });
    await port.next((message) => message.type === "upsert" && message.entries.some((entry) => entry.kind === "user"));
    expect(controller.entries).toEqual([
      expect.objectContaining({ kind: "user", text: "hello from the other window" }),
    ]);
  });

  it("attaches a session of another workspace with its stored log", async () => {
    const { sessionId } = await other.request("bonsai/session/create", {
      workspace: project("elsewhere"),
      title: "elsewhere",
    });
    await other.request("bonsai/session/append", { sessionId, role: "user", content: "stored question" });
    await other.request("bonsai/session/append", { sessionId, role: "assistant", content: "stored **answer**" });
    const { controller, port } = setup(project("gamma"));
    await controller.handle({ type: "switchSession", sessionId });
    await port.next((message) => message.type === "reset" && message.entries.length === 2);
    expect(controller.entries.map((entry) => entry.kind)).toEqual(["user", "assistant"]);
    const sessions = await port.next((message) => message.type === "sessions" && message.currentId === sessionId);
    expect(
      sessions.type === "sessions" && sessions.sessions.find((session) => session.sessionId === sessionId)?.foreign,
    ).toBe(true);
  });

  it("answers /help and rejects an unknown command without calling the daemon", async () => {
    const { controller } = setup(project("delta"));
    await controller.handle({ type: "send", text: "/help" });
    await controller.handle({ type: "send", text: "/nope" });
    expect(controller.entries).toEqual([
      expect.objectContaining({ kind: "notice", level: "info", markdown: expect.stringContaining("/compact") }),
      expect.objectContaining({
        kind: "notice",
        level: "error",
        markdown: expect.stringContaining("unknown command /nope"),
      }),
    ]);
  });

  it("shows a daemon error as an error notice", async () => {
    const { controller } = setup(project("epsilon"));
    await controller.handle({ type: "switchSession", sessionId: "no-such-session" });
    expect(controller.entries.at(-1)).toMatchObject({ kind: "notice", level: "error" });
  });

  it("sends this editor's provider settings and warns, creating nothing, when they cannot apply", async () => {
    const sessions = new Sessions(rpc, new MemoryStore(), project("zeta"), { BONSAI_PROVIDER: "opneai" });
    const warnings: string[] = [];
    const controller = new ChatController(rpc, sessions, {
      reveal: () => undefined,
      revealChat: () => undefined,
      warn: (message) => warnings.push(message),
    });
    await controller.handle({ type: "send", text: "hi" });
    expect(warnings).toEqual([expect.stringContaining("unknown provider 'opneai' (BONSAI_PROVIDER")]);
    expect(controller.entries.at(-1)).toMatchObject({ kind: "notice", level: "error" });
    expect(sessions.sessionId).toBeUndefined();
    const { sessions: listed } = await rpc.request("bonsai/session/list", { workspace: project("zeta") });
    expect(listed).toEqual([]);
  });

  it("keeps a waiting approval's card when the window loads its session again", async () => {
    const { controller, sessions, port } = setup(project("eta"));
    await controller.handle({ type: "newSession" });
    const sessionId = sessions.sessionId as string;
    const params = { sessionId, turnId: "t1", tool: "bash", args: { command: "echo hi" }, approvalId: "a1" };
    const answer = controller.requestApproval(params, new AbortController().signal);
    await controller.handle({ type: "switchSession", sessionId }); // a reconnect attaches it again
    const reset = port.messages.filter((message) => message.type === "reset").at(-1);
    expect(reset?.type === "reset" && reset.entries).toEqual([
      expect.objectContaining({ kind: "approval", key: "approval:a1", state: "pending", command: "echo hi" }),
    ]);
    await controller.handle({ type: "approval", id: "a1", approved: true });
    await expect(answer).resolves.toEqual({ approved: true });
    expect(controller.entries).toEqual([expect.objectContaining({ kind: "approval", state: "approved" })]);
  });

  it("resolves an approval with the user's answer, or expires it when the daemon withdraws", async () => {
    const { controller, port } = setup(project("zeta"));
    const params = { sessionId: "s", turnId: "t1", tool: "edit_file", args: { path: "a.py" }, diff: "-a\n+b" };
    const answer = controller.requestApproval(params, new AbortController().signal);
    const card = await port.next((message) => message.type === "upsert" && message.entries[0]?.kind === "approval");
    const key = card.type === "upsert" ? card.entries[0]?.key : undefined;
    await controller.handle({ type: "approval", id: String(key).replace("approval:", ""), approved: true });
    await expect(answer).resolves.toEqual({ approved: true });
    expect(controller.entries.at(-1)).toMatchObject({ kind: "approval", state: "approved" });

    const withdraw = new AbortController();
    const second = controller.requestApproval({ ...params, turnId: "t2" }, withdraw.signal);
    withdraw.abort();
    await expect(second).resolves.toEqual({ approved: false });
    expect(controller.entries.at(-1)).toMatchObject({ kind: "approval", state: "expired" });
  });
});
