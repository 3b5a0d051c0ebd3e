import { describe, expect, it } from "vitest";
import { locate } from "../../src/rpc/locate";

function probes(executables: string[], python = false) {
  return {
    env: { PATH: "/usr/bin:/bin" },
    home: "/home/u",
    isExecutable: (path: string) => executables.includes(path),
    pythonHasBonsai: () => python,
  };
}

describe("locate", () => {
  it("prefers the workspace's .venv in a trusted workspace and says so", () => {
    const { found } = locate("/w", true, probes(["/w/.venv/bin/bonsai", "/usr/bin/bonsai"]));
    expect(found).toEqual({
      command: "/w/.venv/bin/bonsai",
      args: ["connect"],
      how: "the workspace's .venv (/w/.venv/bin/bonsai)",
    });
  });

  it("never runs a repository's own .venv in an untrusted workspace", () => {
    const { found, tried } = locate("/w", false, probes(["/w/.venv/bin/bonsai"]));
    expect(found).toBeUndefined();
    expect(tried).toContain("(the workspace's .venv is skipped until you trust the workspace)");
  });

  it("falls back to ~/.local/bin, pipx and python3 -m bonsai, in that order", () => {
    expect(locate("/w", true, probes(["/home/u/.local/bin/bonsai"])).found?.how).toBe(
      "~/.local/bin (/home/u/.local/bin/bonsai)",
    );
    expect(locate("/w", true, probes(["/home/u/.local/pipx/venvs/bonsai/bin/bonsai"])).found?.how).toContain(
      "pipx's venv",
    );
    expect(locate("/w", true, probes([], true)).found).toEqual({
      command: "python3",
      args: ["-P", "-m", "bonsai", "connect"], // never importing a workspace's own bonsai/
      how: "python3 -m bonsai",
    });
    const { tried } = locate("/w", true, probes([]));
    expect(tried).toEqual([
      "the workspace's .venv",
      "bonsai on PATH",
      "~/.local/bin",
      "pipx's venv",
      "python3 -m bonsai",
    ]);
  });
});
