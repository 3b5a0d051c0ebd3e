import { describe, expect, it } from "vitest";
import { episodeNodes } from "../../src/episodes/episodesModel";
import { memoryNodes } from "../../src/memory/memoryModel";
import { ruleNodes, rulesMessage } from "../../src/rules/rulesModel";

describe("episodeNodes", () => {
  it("lists episodes by number with state and token figures", () => {
    const nodes = episodeNodes("s1", [
      { number: 2, title: "fix tests", state: "open", tokensBefore: 3000 },
      { number: 1, title: "explore", state: "archived", tokensBefore: 12_000, tokensAfter: 900 },
    ]);
    expect(nodes.map((item) => item.label)).toEqual(["#1 explore", "#2 fix tests"]);
    expect(nodes[0]).toMatchObject({
      description: "archived · 12k → 900 tok",
      contextValue: "episode.archived",
      icon: { id: "archive" },
    });
    expect(nodes[1]).toMatchObject({ description: "open · 3k tok", data: { sessionId: "s1", number: 2 } });
  });
});

describe("memoryNodes", () => {
  it("groups entries by tier and marks disabled ones", () => {
    const [project, user] = memoryNodes([
      {
        name: "prefers-thiserror",
        tier: "user",
        type: "preference",
        description: "thiserror at boundaries",
        path: "/h/memory/prefers-thiserror.md",
      },
      {
        name: "uses-pytest",
        tier: "project",
        type: "project",
        description: "tests use pytest",
        path: "/w/.bonsai/memory/uses-pytest.md",
        enabled: false,
      },
    ]);
    expect(project).toMatchObject({ label: "Project", description: "1" });
    expect(user?.children?.[0]).toMatchObject({
      contextValue: "memory.enabled",
      action: { kind: "openFile", path: "/h/memory/prefers-thiserror.md" },
    });
    expect(project?.children?.[0]).toMatchObject({
      contextValue: "memory.disabled",
      description: "project · disabled · tests use pytest",
      icon: { id: "circle-slash" },
    });
  });
});

describe("ruleNodes", () => {
  it("shows each rule as one row: on/off, source and the actions it offers", () => {
    const rules = [
      { id: "r1", text: "Always use pnpm", source: "user" as const, enabled: true, created: 1 },
      { id: "r2", text: "Never touch generated files", source: "detected" as const, enabled: false, created: 2 },
    ];
    const [mine, detected] = ruleNodes(rules);
    expect(mine).toMatchObject({
      label: "Always use pnpm",
      description: "yours",
      contextValue: "rule.enabled",
      data: { id: "r1", text: "Always use pnpm", enabled: true },
    });
    expect(detected).toMatchObject({
      description: "detected · off",
      contextValue: "rule.disabled",
      icon: { id: "circle-slash" },
    });
    expect(rulesMessage(rules)).toBe("1 of 2 rules on · sent every turn");
    expect(rulesMessage([])).toContain("No rules yet");
  });
});
