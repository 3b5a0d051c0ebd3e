/**
 * Which daemon settings the VS Code settings `bonsai.provider`, `bonsai.model`
 * and `bonsai.preset` change. Empty means "use the daemon's configuration".
 * Pure: compares against `bonsai/config/get`'s effective settings.
 */

export interface EditorSettings {
  provider: string;
  model: string;
  preset: string;
}

export type SettingsAction =
  | { kind: "set"; key: "providers.provider" | "providers.model"; value: string }
  | { kind: "preset"; preset: "keep" | "balanced" | "save" };

const PRESETS = ["keep", "balanced", "save"] as const;

export function settingsPlan(editor: EditorSettings, effective: Record<string, unknown>): SettingsAction[] {
  const providers = (effective.providers ?? {}) as Record<string, unknown>;
  const context = (effective.context ?? {}) as Record<string, unknown>;
  const actions: SettingsAction[] = [];
  const provider = editor.provider.trim();
  if (provider !== "" && providers.provider !== provider) {
    actions.push({ kind: "set", key: "providers.provider", value: provider });
  }
  const model = editor.model.trim();
  if (model !== "" && providers.model !== model) {
    actions.push({ kind: "set", key: "providers.model", value: model });
  }
  const preset = PRESETS.find((name) => name === editor.preset.trim());
  if (preset !== undefined && context.preset !== preset) {
    actions.push({ kind: "preset", preset });
  }
  return actions;
}
