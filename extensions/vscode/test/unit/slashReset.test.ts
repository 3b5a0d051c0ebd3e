import { describe, expect, it } from "vitest";
import type { Rpc } from "../../src/rpc/rpc";
import { parseInput } from "../../src/chat/slash";
import { runSlash } from "../../src/chat/slashCommands";

/** An Rpc that records requests and answers bonsai/session/reset as the daemon would. */
function recordingRpc(answer: { episode?: number; kind: string; message: string }) {
  const sent: Array<{ method: string; params: unknown }> = [];
  const rpc = {
    request: async (method: string, params: unknown) => {
      sent.push({ method, params });
      return answer;
    },
  } as unknown as Rpc;
  return { rpc, sent };
}

describe("hard resets in the chat", () => {
  it.each(["clear", "start", "review"] as const)("/%s maps to bonsai/session/reset", async (kind) => {
    const parsed = parseInput(`/${kind}`);
    expect(parsed).toEqual({ kind: "reset", reset: kind });
    const { rpc, sent } = recordingRpc({ episode: 2, kind, message: 'closed episode #2 "Parser"' });
    if (parsed.kind !== "reset") throw new Error("not a reset");
    const reply = await runSlash(parsed, {
      rpc,
      workspace: "/ws",
      session: async () => "s_1",
      reveal: () => undefined,
    });
    expect(sent).toEqual([{ method: "bonsai/session/reset", params: { sessionId: "s_1", kind } }]);
    expect(reply).toBe(`**/${kind}**: closed episode #2 "Parser"`);
  });

  it("shows the daemon's reason when nothing closed", async () => {
    const message = "nothing to reset: episode #1 has done no real work yet";
    const { rpc } = recordingRpc({ kind: "clear", message });
    const reply = await runSlash(
      { kind: "reset", reset: "clear" },
      { rpc, workspace: "/ws", session: async () => "s_1", reveal: () => undefined },
    );
    expect(reply).toBe(`**/clear**: ${message}`);
  });

  it("rejects arguments", () => {
    expect(parseInput("/clear everything")).toEqual({ kind: "invalid", error: "/clear takes no arguments" });
  });
});
