import { describe, expect, it } from "vitest";
import type { ChatEventParams, WireMessage } from "../../src/protocol.generated";
import { Transcript } from "../../src/chat/transcript";

type Kind = ChatEventParams["kind"];
/** The fields of one kind of event besides its envelope (session, turn, seq, kind). */
type Body<K extends Kind> = Omit<Extract<ChatEventParams, { kind: K }>, "sessionId" | "turnId" | "seq" | "kind">;

function event<K extends Kind>(seq: number, kind: K, ...body: {} extends Body<K> ? [] : [Body<K>]): ChatEventParams {
  return { sessionId: "s1", turnId: "t1", seq, kind, ...body[0] } as ChatEventParams;
}

function message(
  id: string,
  role: WireMessage["role"],
  content: string,
  extra: Partial<WireMessage> = {},
): WireMessage {
  return { messageId: id, role, content, createdAt: 0, ...extra };
}

describe("Transcript", () => {
  it("accumulates streamed deltas into one reply and ends it on done", () => {
    const transcript = new Transcript();
    transcript.turnStarted("t1");
    transcript.chatEvent(event(1, "delta", { text: "Hel" }));
    transcript.chatEvent(event(2, "delta", { text: "lo" }));
    expect(transcript.busy).toBe(true);
    const changed = transcript.chatEvent(event(3, "done"));
    expect(transcript.entries).toHaveLength(1);
    expect(transcript.entries[0]).toMatchObject({ kind: "assistant", text: "Hello", streaming: false });
    expect(changed).toHaveLength(1);
    expect(transcript.busy).toBe(false);
  });

  it("ignores a replayed or out-of-order event", () => {
    const transcript = new Transcript();
    transcript.chatEvent(event(1, "delta", { text: "a" }));
    expect(transcript.chatEvent(event(1, "delta", { text: "a" }))).toEqual([]);
    expect(transcript.entries[0]).toMatchObject({ text: "a" });
  });

  it("shows a tool call as a card and fills in its result", () => {
    const transcript = new Transcript();
    transcript.chatEvent(event(1, "delta", { text: "Reading." }));
    const changed = transcript.chatEvent(
      event(2, "toolCall", { toolCallId: "c1", name: "read_file", args: { path: "a.py" } }),
    );
    expect(changed.map((entry) => [entry.kind, entry.kind === "assistant" && entry.streaming])).toEqual([
      ["assistant", false],
      ["tool", false],
    ]);
    transcript.chatEvent(
      event(3, "toolResult", { toolCallId: "c1", name: "read_file", result: "print(1)", isError: false }),
    );
    transcript.chatEvent(event(4, "delta", { text: "Done." }));
    const kinds = transcript.entries.map((entry) => entry.kind);
    expect(kinds).toEqual(["assistant", "tool", "assistant"]);
    expect(transcript.entries[1]).toMatchObject({
      name: "read_file",
      result: "print(1)",
      pending: false,
      isError: false,
    });
    expect(transcript.entries[1]).toMatchObject({ args: expect.stringContaining('"path": "a.py"') });
    expect(transcript.entries[0]).toMatchObject({ streaming: false });
  });

  it("does not show a streamed reply twice when the stored message arrives", () => {
    const transcript = new Transcript();
    transcript.messageAppended(message("m1", "user", "hi"));
    transcript.chatEvent(event(1, "delta", { text: "Hello" }));
    transcript.chatEvent(event(2, "toolCall", { toolCallId: "c1", name: "bash", args: { command: "ls" } }));
    transcript.messageAppended(
      message("m2", "assistant", "Hello", { toolCalls: [{ id: "c1", name: "bash", arguments: "{}" }] }),
    );
    transcript.messageAppended(message("m3", "tool", "a.py", { toolCallId: "c1" }));
    transcript.chatEvent(event(3, "toolResult", { toolCallId: "c1", name: "bash", result: "a.py", isError: false }));
    transcript.chatEvent(event(4, "delta", { text: "Found a.py" }));
    transcript.messageAppended(message("m4", "assistant", "Found a.py"));
    transcript.chatEvent(event(5, "done"));
    expect(transcript.entries.map((entry) => entry.kind)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(transcript.entries[3]).toMatchObject({ text: "Found a.py", bound: true });
  });

  it("adds a message stored by another window once", () => {
    const transcript = new Transcript();
    const stored = message("m9", "assistant", "from elsewhere");
    expect(transcript.messageAppended(stored)).toHaveLength(1);
    expect(transcript.messageAppended(stored)).toHaveLength(0);
    expect(transcript.entries).toHaveLength(1);
  });

  it("rebuilds tool cards from a stored log", () => {
    const transcript = new Transcript();
    transcript.load([
      message("m0", "system", "persona"),
      message("m1", "user", "list files"),
      message("m2", "assistant", "", { toolCalls: [{ id: "c1", name: "bash", arguments: '{"command":"ls"}' }] }),
      message("m3", "tool", "boom", { toolCallId: "c1", status: "error" }),
    ]);
    expect(transcript.entries.map((entry) => entry.kind)).toEqual(["user", "tool"]);
    expect(transcript.entries[1]).toMatchObject({ name: "bash", result: "boom", isError: true, pending: false });
  });

  it("turns an error event into an error notice and stops being busy", () => {
    const transcript = new Transcript();
    transcript.turnStarted("t1");
    transcript.chatEvent(event(1, "error", { message: "provider unreachable" }));
    expect(transcript.busy).toBe(false);
    expect(transcript.entries.at(-1)).toMatchObject({
      kind: "notice",
      level: "error",
      markdown: "provider unreachable",
    });
  });

  it("shows a cancel as cancelled, not as an error, and stops being busy", () => {
    const transcript = new Transcript();
    transcript.turnStarted("t1");
    transcript.chatEvent(event(1, "delta", { text: "Once upon" }));
    transcript.chatEvent(event(2, "cancelled"));
    expect(transcript.busy).toBe(false);
    expect(transcript.entries.at(-1)).toMatchObject({ kind: "notice", level: "info", markdown: "cancelled" });
    expect(transcript.entries.filter((entry) => entry.kind === "notice" && entry.level === "error")).toEqual([]);
  });

  it("records usage on the turn's last reply", () => {
    const transcript = new Transcript();
    transcript.chatEvent(event(1, "delta", { text: "ok" }));
    transcript.chatEvent(
      event(2, "usage", { usage: { inputTokens: 1200, outputTokens: 30, cachedInputTokens: 1000 } }),
    );
    expect(transcript.entries[0]).toMatchObject({ usage: "in 1.2k · out 30 · cached 1k" });
  });

  it("tracks an approval from pending to answered", () => {
    const transcript = new Transcript();
    transcript.addApproval("t1:1", { tool: "edit_file", args: { path: "a.py" }, diff: "--- a\n+++ b\n-x\n+y" });
    expect(transcript.entries[0]).toMatchObject({
      kind: "approval",
      state: "pending",
      diff: expect.stringContaining("+y"),
    });
    transcript.setApprovalState("t1:1", "approved");
    expect(transcript.entries[0]).toMatchObject({ state: "approved" });
    expect(transcript.setApprovalState("nope", "approved")).toBeUndefined();
  });
  it("shows recalled background data as a chip, never as the user's message", () => {
    const transcript = new Transcript();
    transcript.load([
      message("u1", "user", "how do we deploy?"),
      message("u2", "user", '<background-data source="bonsai-memory">…</background-data>', {
        name: "memory",
        recalled: { sources: ["memory"], titles: ["deploy-checklist"], text: "make deploy" },
      }),
    ]);
    expect(transcript.entries.map((entry) => entry.kind)).toEqual(["user", "recalled"]);
    expect(transcript.entries[1]).toMatchObject({ titles: ["deploy-checklist"], text: "make deploy" });
  });

  it("keeps one card per call when a provider repeats call ids across turns", () => {
    const transcript = new Transcript();
    for (const turnId of ["t1", "t2"]) {
      transcript.chatEvent({
        sessionId: "s1",
        turnId,
        seq: 1,
        kind: "toolCall",
        toolCallId: "call_0",
        name: "bash",
        args: {},
      });
      transcript.chatEvent({
        sessionId: "s1",
        turnId,
        seq: 2,
        kind: "toolResult",
        toolCallId: "call_0",
        name: "bash",
        result: turnId,
        isError: false,
      });
    }
    const tools = transcript.entries.filter((entry) => entry.kind === "tool");
    expect(tools).toHaveLength(2);
    expect(tools.map((tool) => (tool.kind === "tool" ? tool.result : ""))).toEqual(["t1", "t2"]);
  });

  it("records how an approval ended in another window", () => {
    const transcript = new Transcript();
    transcript.addApproval("a1", { tool: "bash", args: { command: "make" }, cwd: "/w" });
    transcript.setApprovalState("a1", "approved", "Approved in Neovim 4");
    expect(transcript.approval("a1")).toMatchObject({
      state: "approved",
      verdict: "Approved in Neovim 4",
      command: "make",
      cwd: "/w",
    });
  });
  it("shows a retrying line during the provider's backoff, gone when the reply streams", () => {
    const transcript = new Transcript();
    transcript.turnStarted("t1");
    transcript.chatEvent(
      event(1, "retry", { text: "retrying in 8 s (rate limited; attempt 2)", retryInS: 8, attempt: 1 }),
    );
    expect(transcript.entries[0]).toMatchObject({
      kind: "retry",
      active: true,
      text: "retrying in 8 s (rate limited; attempt 2)",
    });
    transcript.chatEvent(event(2, "delta", { text: "Hi" }));
    expect(transcript.entries[0]).toMatchObject({ kind: "retry", active: false });
  });
});
