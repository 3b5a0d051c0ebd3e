/**
 * Finding `bonsai` when `bonsai.command` is not set. The extension host takes
 * PATH from the login shell, which often lacks a virtualenv's bin, so the
 * usual places are tried in order: the workspace's `.venv` (only in a trusted
 * workspace: a repository's own files are not run unasked), `bonsai` on PATH,
 * `~/.local/bin`, pipx, then `python3 -m bonsai`. Pure except for the probes
 * it is given, so it is unit-tested without a file system.
 */
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import type { Launch } from "./launch";

export interface Located extends Launch {
  /** Where it was found, in words, for the output channel and the status tooltip. */
  how: string;
}

export interface Probes {
  isExecutable(path: string): boolean;
  /** Does `python3 -P -c "import bonsai"` succeed (never importing from the current directory)? */
  pythonHasBonsai(python: string): boolean;
  env: NodeJS.ProcessEnv;
  home?: string;
}

interface Candidate {
  path: string;
  how: string;
}

export function candidates(workspace: string | undefined, trusted: boolean, probes: Probes): Candidate[] {
  const home = probes.home ?? homedir();
  const list: Candidate[] = [];
  if (workspace !== undefined && trusted) {
    list.push({ path: join(workspace, ".venv", "bin", "bonsai"), how: "the workspace's .venv" });
  }
  for (const dir of (probes.env.PATH ?? "").split(delimiter).filter((d) => d !== "")) {
    list.push({ path: join(dir, "bonsai"), how: "bonsai on PATH" });
  }
  list.push({ path: join(home, ".local", "bin", "bonsai"), how: "~/.local/bin" });
  if (probes.env.PIPX_BIN_DIR) {
    list.push({ path: join(probes.env.PIPX_BIN_DIR, "bonsai"), how: "pipx ($PIPX_BIN_DIR)" });
  }
  const pipxHome = probes.env.PIPX_HOME ?? join(home, ".local", "pipx");
  list.push({ path: join(pipxHome, "venvs", "bonsai", "bin", "bonsai"), how: "pipx's venv" });
  return list;
}

/** The first usable bonsai, or undefined with the places that were tried. */
export function locate(
  workspace: string | undefined,
  trusted: boolean,
  probes: Probes,
): { found?: Located; tried: string[] } {
  const tried: string[] = [];
  for (const candidate of candidates(workspace, trusted, probes)) {
    if (probes.isExecutable(candidate.path)) {
      return {
        found: { command: candidate.path, args: ["connect"], how: `${candidate.how} (${candidate.path})` },
        tried,
      };
    }
    if (!tried.includes(candidate.how)) {
      tried.push(candidate.how);
    }
  }
  if (probes.pythonHasBonsai("python3")) {
    // -P: never import from the current directory (a workspace may hold a bonsai/ of its own)
    return { found: { command: "python3", args: ["-P", "-m", "bonsai", "connect"], how: "python3 -m bonsai" }, tried };
  }
  tried.push("python3 -m bonsai");
  if (workspace !== undefined && !trusted) {
    tried.push("(the workspace's .venv is skipped until you trust the workspace)");
  }
  return { tried };
}
