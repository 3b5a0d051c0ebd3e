/**
 * The provider settings this window sends with `bonsai/session/create` and
 * `bonsai/chat/send`: the same variables `bonsai chat` reads, taken from the
 * extension host's environment, so a daemon started earlier (by another window
 * or the CLI) uses what this editor was started with. Only collects: the daemon
 * decides what applies. Keys travel over the daemon's 0600 socket and are never
 * logged here.
 */
import type { ClientSettings } from "../protocol.generated";

const FIELDS = {
  BONSAI_PROVIDER: "provider",
  BONSAI_MODEL: "model",
  BONSAI_BASE_URL: "baseUrl",
  BONSAI_FAST_MODEL: "fastModel",
} as const;

/** provider → its key variable (server/bonsai/services/providers/factory.py KEY_ENV). */
const KEY_ENV: Record<string, string> = {
  openai: "OPENAI_API_KEY",
  anthropic: "ANTHROPIC_API_KEY",
  deepseek: "DEEPSEEK_API_KEY",
  "openai-compatible": "OPENAI_COMPATIBLE_API_KEY",
};

/** The daemon's code for a configuration mistake the user must fix (its message names the fix). */
export const CONFIG_ERROR = -32010;

/** The settings in `env`, or undefined when none of the variables is set. */
export function clientSettings(env: NodeJS.ProcessEnv, source: string): ClientSettings | undefined {
  const settings: ClientSettings = { source, names: [] };
  const names: string[] = [];
  for (const [variable, field] of Object.entries(FIELDS)) {
    const value = env[variable]?.trim();
    if (value) {
      settings[field] = value;
      names.push(variable);
    }
  }
  const apiKeys: Record<string, string> = {};
  for (const [provider, variable] of Object.entries(KEY_ENV)) {
    const value = env[variable]?.trim();
    if (value) {
      apiKeys[provider] = value;
      names.push(variable);
    }
  }
  if (names.length === 0) {
    return undefined;
  }
  return { ...settings, apiKeys, names };
}

/** Whether `error` is the daemon saying a setting cannot apply. */
export function isConfigError(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === CONFIG_ERROR;
}
