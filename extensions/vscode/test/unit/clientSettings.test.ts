/** The provider settings a window sends: the CLI's variables, nothing when none is set. */
import { describe, expect, it } from "vitest";
import { clientSettings, isConfigError } from "../../src/session/clientSettings";

describe("clientSettings", () => {
  it("sends nothing when no variable is set (blank counts as unset)", () => {
    expect(clientSettings({ HOME: "/home/u", BONSAI_MODEL: "  " }, "VS Code")).toBeUndefined();
  });

  it("takes the CLI's variables and the keys of providers, naming where they came from", () => {
    const settings = clientSettings(
      {
        BONSAI_PROVIDER: "openai",
        BONSAI_BASE_URL: "http://127.0.0.1:9/v1",
        OPENAI_API_KEY: "sk-secret",
        BONSAI_PRESET: "lean",
      },
      "VS Code (pid 7)",
    );
    expect(settings).toEqual({
      provider: "openai",
      baseUrl: "http://127.0.0.1:9/v1",
      apiKeys: { openai: "sk-secret" },
      source: "VS Code (pid 7)",
      names: ["BONSAI_PROVIDER", "BONSAI_BASE_URL", "OPENAI_API_KEY"],
    });
    expect(JSON.stringify(settings?.names)).not.toContain("sk-secret");
  });

  it("recognises the daemon's configuration error", () => {
    expect(isConfigError(Object.assign(new Error("no API key"), { code: -32010 }))).toBe(true);
    expect(isConfigError(Object.assign(new Error("boom"), { code: -32603 }))).toBe(false);
  });
});
