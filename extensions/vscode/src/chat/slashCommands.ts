/** Runs one parsed slash command against the daemon and returns a markdown reply. */
import type { Rpc } from "../rpc/rpc";
import type { ChatInput } from "./slash";
import { SLASH_HELP } from "./slash";
import { formatCompact, formatCtx, formatEpisodes, formatMemory, formatReset } from "./slashFormat";

export type ViewName = "ledger" | "episodes" | "memory";

export interface SlashDeps {
  rpc: Rpc;
  workspace: string;
  /** The current session, created on demand. */
  session(): Promise<string>;
  reveal(view: ViewName): void;
}

type Command = Exclude<ChatInput, { kind: "message" } | { kind: "invalid" }>;

export async function runSlash(input: Command, deps: SlashDeps): Promise<string> {
  switch (input.kind) {
    case "help":
      return SLASH_HELP;
    case "ctx": {
      const result = await deps.rpc.request("bonsai/ctx/get", { sessionId: await deps.session(), view: "ledger" });
      deps.reveal("ledger");
      return formatCtx(result);
    }
    case "compact": {
      const params = {
        sessionId: await deps.session(),
        preview: input.preview,
        ...(input.target === undefined ? {} : { target: input.target }),
        ...(input.mode === undefined ? {} : { mode: input.mode }),
      };
      return formatCompact(await deps.rpc.request("bonsai/ctx/compact", params));
    }
    case "episodes": {
      const { episodes } = await deps.rpc.request("bonsai/episodes/list", { sessionId: await deps.session() });
      deps.reveal("episodes");
      return formatEpisodes(episodes);
    }
    case "memory": {
      const result = await deps.rpc.request("bonsai/memory/list", { workspace: deps.workspace });
      deps.reveal("memory");
      return formatMemory(result.entries, result.issues ?? []);
    }
    case "remember": {
      const { entry } = await deps.rpc.request("bonsai/memory/add", {
        fact: input.fact,
        tier: input.tier,
        workspace: deps.workspace,
      });
      deps.reveal("memory");
      return `Remembered \`${entry.name}\` (${entry.tier} memory).`;
    }
    case "smol":
      return toggleSmol(deps);
    case "reset": {
      const params = { sessionId: await deps.session(), kind: input.reset };
      return formatReset(await deps.rpc.request("bonsai/session/reset", params));
    }
    case "preset": {
      await deps.rpc.request("bonsai/config/preset", { preset: input.preset, workspace: deps.workspace });
      return `Preset **${input.preset}** applied.`;
    }
  }
}

async function toggleSmol(deps: SlashDeps): Promise<string> {
  const { effective } = await deps.rpc.request("bonsai/config/get", { workspace: deps.workspace });
  const context = effective.context as { smol?: unknown } | undefined;
  const smol = context?.smol !== true;
  await deps.rpc.request("bonsai/config/preset", { smol, workspace: deps.workspace });
  return smol ? "Smol mode **on**: compact profile for small models." : "Smol mode **off**.";
}
