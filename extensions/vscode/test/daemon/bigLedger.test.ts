/**
 * A long session's ledger (521 messages, imported through the real daemon) as the
 * Context view builds it: every node a row once, in the daemon's order, ids stable
 * across refreshes, and a node far down pinned through the daemon shows pinned.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ledgerNodes } from "../../src/ledger/ledgerModel";
import type { TreeNode } from "../../src/tree/node";
import { DaemonRpc, tempHome } from "../support/daemonRpc";

const CALLS = 260; // each a tool call and its result: 1 + 2 × 260 messages

/** A Claude Code transcript: one task, then `CALLS` file reads, one entry a line. */
function recording(workspace: string): string {
  const base = { sessionId: "big", cwd: workspace, version: "2.0.1", userType: "external" };
  const lines: string[] = [];
  let parent: string | null = null;
  const entry = (uuid: string, type: string, message: object): void => {
    lines.push(JSON.stringify({ ...base, uuid, parentUuid: parent, isSidechain: false, type, message }));
    parent = uuid;
  };
  entry("u0", "user", { role: "user", content: "Read every module and summarise them" });
  for (let i = 1; i <= CALLS; i++) {
    const id = `toolu_${String(i).padStart(3, "0")}`;
    const file = `/w/m${String(i).padStart(3, "0")}.py`;
    entry(`a${i}`, "assistant", {
      id: `msg_${i}`,
      role: "assistant",
      content: [{ type: "tool_use", id, name: "Read", input: { file_path: file } }],
    });
    entry(`r${i}`, "user", {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: id, content: `module ${i}: ` + "x = 1\n".repeat(20) }],
    });
  }
  return lines.join("\n") + "\n";
}

function rows(roots: readonly TreeNode[]): TreeNode[] {
  return roots.flatMap((root) => (root.id.startsWith("section:") ? (root.children ?? []) : []));
}

describe("a ledger of 500+ nodes", () => {
  const home = tempHome();
  const workspace = join(tempHome(), "project");
  let rpc: DaemonRpc;
  let sessionId: string;

  beforeAll(async () => {
    mkdirSync(workspace, { recursive: true });
    const path = join(workspace, "big.jsonl");
    writeFileSync(path, recording(workspace));
    rpc = await DaemonRpc.start(home);
    const imported = await rpc.request("bonsai/session/import", {
      path,
      format: "claude-code",
      run: 0,
      workspace,
    });
    expect(imported.messages).toBe(1 + 2 * CALLS);
    sessionId = imported.sessionId;
  }, 60_000);

  afterAll(async () => {
    await rpc.close(true);
    rmSync(home, { recursive: true, force: true });
  });

  it("lists every node once, in its section in the daemon's order, with ids stable across refreshes", async () => {
    const result = await rpc.request("bonsai/ctx/get", { sessionId, view: "ledger" });
    const nodes = result.nodes ?? [];
    expect(nodes.length).toBeGreaterThanOrEqual(500);
    const roots = ledgerNodes(sessionId, result);
    const listed = rows(roots);
    expect(listed).toHaveLength(nodes.length);
    for (const root of roots.filter((candidate) => candidate.id.startsWith("section:"))) {
      const section = root.id.slice("section:".length);
      const members = nodes.filter((node) => node.section === section).map((node) => node.id);
      expect(
        root.children?.map((row) => row.data?.nodeId),
        `the ${section} rows`,
      ).toEqual(members);
    }
    expect(new Set(listed.map((row) => row.id)).size).toBe(listed.length);
    const again = rows(ledgerNodes(sessionId, await rpc.request("bonsai/ctx/get", { sessionId, view: "ledger" })));
    expect(again.map((row) => row.id)).toEqual(listed.map((row) => row.id));
    const messages = ledgerNodes(sessionId, result).find((root) => root.id === "section:messages");
    expect(messages?.expanded).toBe(true);
    expect(messages?.description).toMatch(new RegExp(`^${messages?.children?.length} · `));
  });

  it("pins a node far down through the daemon and its row shows it pinned", async () => {
    const before = rows(ledgerNodes(sessionId, await rpc.request("bonsai/ctx/get", { sessionId, view: "ledger" })));
    const target = before.find((row) => row.label.includes("m250.py"));
    expect(target, "the row of the 250th read").toBeDefined();
    const nodeId = String(target?.data?.nodeId);
    const pinned = await rpc.request("bonsai/ctx/pin", { sessionId, nodeId });
    expect(pinned.node.state).toBe("pinned");
    const after = rows(ledgerNodes(sessionId, await rpc.request("bonsai/ctx/get", { sessionId, view: "ledger" })));
    const row = after.find((candidate) => candidate.id === target?.id);
    expect(row?.description).toMatch(/· pinned$/);
    expect(row?.contextValue).toMatch(/^ctxNode\.pinned/);
    expect(after.filter((candidate) => candidate.data?.state === "pinned")).toHaveLength(1);
  });
});
