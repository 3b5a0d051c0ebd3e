/**
 * The bridge that cannot start: bonsai.command set to a Python without bonsai.
 * The chat and the status chip say so in words (the command, what it said,
 * the setting to change), and once the setting is put back the window
 * reconnects with its conversation whole.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Step } from "./steps.mts";
import { chatFrame, STATUS_CHIP } from "./workbench.mts";

function assert(condition: boolean, message: string): asserts condition {
  if (!condition) {
    throw new Error(message);
  }
}

/** `-I`: no PYTHONPATH, no user site: this Python surely has no bonsai. */
const NO_BONSAI = { "bonsai.command": "/usr/bin/python3", "bonsai.args": ["-I", "-m", "bonsai"] };

const badCommand: Step = {
  name: "bad-command",
  async run(context) {
    const { page } = context;
    const chat = chatFrame(page);
    const messages = chat.locator(".entry.user, .entry.assistant");
    const entries = await messages.count();
    assert(entries > 0, "the chat shows no conversation before the bad command");
    // Machine settings: where a remote window reads machine-overridable ones such as bonsai.command.
    const settingsFile = join(context.root, "user-data", "Machine", "settings.json");
    const original = readFileSync(settingsFile, "utf-8");
    writeFileSync(settingsFile, JSON.stringify({ ...JSON.parse(original), ...NO_BONSAI }, null, 2));
    const status = chat.locator("#status:not([hidden])", { hasText: "has no bonsai installed" });
    try {
      await status.waitFor();
    } finally {
      writeFileSync(settingsFile, original);
    }
    const said = (await status.textContent())?.trim() ?? "";
    assert(
      said.includes('said "No module named bonsai"') && said.includes("set bonsai.command to the bonsai executable"),
      `the chat says "${said}"`,
    );
    // The setting put back: the window reconnects, and the conversation is all there.
    await chat.locator("#status[hidden]").waitFor({ state: "attached" });
    await page.locator(STATUS_CHIP, { hasText: "%" }).waitFor();
    await messages.nth(entries - 1).waitFor();
    const after = await messages.count();
    assert(after === entries, `the chat shows ${after} messages after reconnecting, ${entries} before`);
    return `bad bonsai.command: the chat said "${said}"; put back: reconnected with all ${entries} messages`;
  },
};

export const CONNECTION_STEPS: readonly Step[] = [badCommand];
