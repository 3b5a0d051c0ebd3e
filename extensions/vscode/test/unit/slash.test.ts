import { describe, expect, it } from "vitest";
import { parseInput } from "../../src/chat/slash";

describe("parseInput", () => {
  it.each([
    ["hello there", { kind: "message", text: "hello there" }],
    ["//etc/hosts is odd", { kind: "message", text: "/etc/hosts is odd" }],
    ["/ctx", { kind: "ctx" }],
    ["/compact", { kind: "compact", preview: false }],
    [
      "/compact preview target=40000 deterministic",
      { kind: "compact", preview: true, target: 40000, mode: "deterministic" },
    ],
    ["/episodes", { kind: "episodes" }],
    ["/memory", { kind: "memory" }],
    ["/remember tabs are four spaces", { kind: "remember", fact: "tabs are four spaces", tier: "user" }],
    ["/remember project use pytest", { kind: "remember", fact: "use pytest", tier: "project" }],
    ["/smol", { kind: "smol" }],
    ["/preset Save", { kind: "preset", preset: "save" }],
    ["/help", { kind: "help" }],
  ])("parses %j", (raw, expected) => {
    expect(parseInput(raw)).toEqual(expected);
  });

  it.each([
    ["/compact later", "/compact: unexpected 'later'"],
    ["/remember", "/remember needs a fact"],
    ["/remember project   ", "/remember needs a fact"],
    ["/preset turbo", "/preset needs one of"],
    ["/frobnicate", "unknown command /frobnicate"],
  ])("rejects %j with a clear message", (raw, message) => {
    const parsed = parseInput(raw);
    expect(parsed.kind).toBe("invalid");
    expect(parsed.kind === "invalid" && parsed.error).toContain(message);
  });
});
