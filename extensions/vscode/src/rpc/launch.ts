/** How the extension starts the daemon bridge: `<command> <args...> connect`. */

export interface Launch {
  command: string;
  args: string[];
}

/**
 * Validate the `bonsai.command` / `bonsai.args` settings and build the command line.
 * `args` go before `connect`, so `python` + `["-m", "bonsai"]` also works.
 */
export function launchFromSettings(command: unknown, args: unknown): Launch {
  if (typeof command !== "string" || command.trim() === "") {
    throw new Error("setting bonsai.command must be a non-empty string (the bonsai executable)");
  }
  const extra = args ?? [];
  if (!Array.isArray(extra) || !extra.every((item) => typeof item === "string")) {
    throw new Error('setting bonsai.args must be a list of strings, e.g. ["-m", "bonsai"]');
  }
  return { command: command.trim(), args: [...(extra as string[]), "connect"] };
}
