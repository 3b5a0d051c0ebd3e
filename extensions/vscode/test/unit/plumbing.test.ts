import { describe, expect, it } from "vitest";
import { NotificationHub } from "../../src/rpc/hub";
import { launchFromSettings } from "../../src/rpc/launch";
import { RestartPolicy } from "../../src/rpc/restartPolicy";
import { sortSessions } from "../../src/session/sessions";
import { settingsPlan } from "../../src/settings/settingsPlan";

describe("launchFromSettings", () => {
  it("runs `<command> <args> connect`", () => {
    expect(launchFromSettings("bonsai", [])).toEqual({ command: "bonsai", args: ["connect"] });
    expect(launchFromSettings(" /usr/bin/python3 ", ["-m", "bonsai"])).toEqual({
      command: "/usr/bin/python3",
      args: ["-m", "bonsai", "connect"],
    });
    expect(launchFromSettings("bonsai", undefined)).toEqual({ command: "bonsai", args: ["connect"] });
  });

  it("rejects bad settings with the setting's name", () => {
    expect(() => launchFromSettings("", [])).toThrow(/bonsai.command/);
    expect(() => launchFromSettings("bonsai", "-m bonsai")).toThrow(/bonsai.args/);
    expect(() => launchFromSettings("bonsai", [1])).toThrow(/bonsai.args/);
  });
});

describe("RestartPolicy", () => {
  it("allows two automatic restarts a minute, then gives up until reset", () => {
    const policy = new RestartPolicy(2, 60_000);
    expect(policy.shouldRestart(0)).toBe(true);
    expect(policy.shouldRestart(1_000)).toBe(true);
    expect(policy.shouldRestart(2_000)).toBe(false);
    expect(policy.shouldRestart(70_000)).toBe(true);
    policy.reset();
    expect(policy.shouldRestart(70_001)).toBe(true);
  });
});

describe("NotificationHub", () => {
  it("binds each method once and fans notifications out", () => {
    const bound: string[] = [];
    const hub = new NotificationHub((method, kind) => bound.push(`${kind}:${method}`));
    const seen: unknown[] = [];
    const first = hub.subscribe("bonsai/ctx/changed", (params) => seen.push(["a", params]));
    hub.subscribe("bonsai/ctx/changed", (params) => seen.push(["b", params]));
    hub.dispatch("bonsai/ctx/changed", 1);
    first.dispose();
    hub.dispatch("bonsai/ctx/changed", 2);
    expect(bound).toEqual(["notification:bonsai/ctx/changed"]);
    expect(seen).toEqual([
      ["a", 1],
      ["b", 1],
      ["b", 2],
    ]);
  });

  it("keeps dispatching when one handler throws", () => {
    const hub = new NotificationHub(() => undefined);
    const seen: number[] = [];
    hub.subscribe("m", () => {
      throw new Error("boom");
    });
    hub.subscribe("m", () => seen.push(1));
    const originalError = console.error;
    console.error = () => undefined;
    hub.dispatch("m", null);
    console.error = originalError;
    expect(seen).toEqual([1]);
  });

  it("answers server requests with the one registered handler", async () => {
    const hub = new NotificationHub(() => undefined);
    hub.handleRequests("bonsai/approval/request", async () => ({ approved: true }));
    expect(() => hub.handleRequests("bonsai/approval/request", async () => ({}))).toThrow(/already registered/);
    await expect(hub.answer("bonsai/approval/request", {}, new AbortController().signal)).resolves.toEqual({
      approved: true,
    });
    await expect(hub.answer("other", {}, new AbortController().signal)).rejects.toThrow(/no handler/);
  });
});

describe("sortSessions", () => {
  it("lists this workspace's sessions first, newest first, and flags the others", () => {
    const info = (sessionId: string, workspace: string, updatedAt: number) => ({
      sessionId,
      title: sessionId,
      workspace,
      createdAt: 0,
      updatedAt,
      messageCount: 1,
    });
    const sorted = sortSessions([info("a", "/other", 9), info("b", "/here", 1), info("c", "/here", 5)], "/here");
    expect(sorted.map((session) => [session.sessionId, session.foreign])).toEqual([
      ["c", false],
      ["b", false],
      ["a", true],
    ]);
  });
});

describe("settingsPlan", () => {
  const effective = { providers: { provider: "openai", model: "gpt-4o-mini" }, context: { preset: "balanced" } };

  it("changes nothing for empty editor settings", () => {
    expect(settingsPlan({ provider: "", model: "", preset: "" }, effective)).toEqual([]);
  });

  it("changes only what differs from the daemon", () => {
    expect(settingsPlan({ provider: "openai", model: "gpt-4.1", preset: "save" }, effective)).toEqual([
      { kind: "set", key: "providers.model", value: "gpt-4.1" },
      { kind: "preset", preset: "save" },
    ]);
  });

  it("ignores an unknown preset", () => {
    expect(settingsPlan({ provider: "", model: "", preset: "turbo" }, effective)).toEqual([]);
  });
});
