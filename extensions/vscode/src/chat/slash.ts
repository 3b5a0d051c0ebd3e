/** Parses what the user typed into a chat message or one slash command. */

export type PresetName = "keep" | "balanced" | "save";

export type ChatInput =
  | { kind: "message"; text: string }
  | { kind: "ctx" }
  | { kind: "compact"; preview: boolean; target?: number; mode?: "provider" | "deterministic" | "fallback" }
  | { kind: "episodes" }
  | { kind: "memory" }
  | { kind: "remember"; fact: string; tier: "user" | "project" }
  | { kind: "smol" }
  | { kind: "preset"; preset: PresetName }
  | { kind: "reset"; reset: ResetKind }
  | { kind: "help" }
  | { kind: "invalid"; error: string };

/** Hard resets: the daemon closes the open task episode (bonsai/session/reset). */
export type ResetKind = "clear" | "start" | "review";

export const SLASH_HELP = [
  "`/ctx` show the context ledger",
  "`/compact [preview] [target=<tokens>] [provider|deterministic|fallback]` compact now, or preview",
  "`/episodes` list task episodes",
  "`/memory` list memory entries",
  "`/remember [project] <fact>` remember a fact",
  "`/smol` toggle the compact profile for small models",
  "`/preset keep|balanced|save` apply a context preset",
  "`/clear`, `/start`, `/review` close the current task episode (a hard reset)",
].join("\n");

const PRESETS: readonly PresetName[] = ["keep", "balanced", "save"];
const MODES = ["provider", "deterministic", "fallback"] as const;

export function parseInput(raw: string): ChatInput {
  const text = raw.trim();
  if (!text.startsWith("/") || text.startsWith("//")) {
    return { kind: "message", text: text.startsWith("//") ? text.slice(1) : text };
  }
  const [head = "", ...rest] = text.slice(1).split(/\s+/);
  const argText = text.slice(1 + head.length).trim();
  switch (head.toLowerCase()) {
    case "ctx":
      return { kind: "ctx" };
    case "compact":
      return parseCompact(rest);
    case "episodes":
      return { kind: "episodes" };
    case "memory":
      return { kind: "memory" };
    case "remember":
      return parseRemember(argText);
    case "smol":
      return { kind: "smol" };
    case "preset":
      return parsePreset(rest);
    case "clear":
    case "start":
    case "review":
      return rest.length === 0
        ? { kind: "reset", reset: head.toLowerCase() as ResetKind }
        : { kind: "invalid", error: `/${head.toLowerCase()} takes no arguments` };
    case "help":
      return { kind: "help" };
    default:
      return {
        kind: "invalid",
        error: `unknown command /${head}; type /help for the list (start with // to send a literal slash)`,
      };
  }
}

function parseCompact(args: string[]): ChatInput {
  const result: Extract<ChatInput, { kind: "compact" }> = { kind: "compact", preview: false };
  for (const arg of args) {
    const mode = MODES.find((item) => item === arg);
    if (arg === "preview") {
      result.preview = true;
    } else if (mode !== undefined) {
      result.mode = mode;
    } else if (/^target=\d+$/.test(arg)) {
      result.target = Number(arg.slice("target=".length));
    } else {
      return {
        kind: "invalid",
        error: `/compact: unexpected '${arg}'; usage: /compact [preview] [target=<tokens>] [provider|deterministic|fallback]`,
      };
    }
  }
  return result;
}

function parseRemember(argText: string): ChatInput {
  const project = /^project(\s|$)/i.test(argText);
  const fact = project ? argText.slice("project".length).trim() : argText;
  if (fact === "") {
    return { kind: "invalid", error: "/remember needs a fact: /remember [project] <fact>" };
  }
  return { kind: "remember", fact, tier: project ? "project" : "user" };
}

function parsePreset(args: string[]): ChatInput {
  const name = args[0]?.toLowerCase();
  const preset = PRESETS.find((item) => item === name);
  if (preset === undefined || args.length !== 1) {
    return { kind: "invalid", error: "/preset needs one of: keep, balanced, save" };
  }
  return { kind: "preset", preset };
}
