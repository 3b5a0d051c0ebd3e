/**
 * Issue 25's ledger header in VS Code: a session on a local OpenAI-compatible
 * server that exposes no window (the simulator under a model name bonsai does
 * not know) and streams no usage. The ledger says where its window came from,
 * shows the "unknown window" note and the tools notice above the tree, and says the billed
 * figure was not reported, beside bonsai's own estimate.
 */
import { join } from "node:path";
import type { Step, StepContext } from "./steps.mts";
import { chatFrame, closeTab, collapsePane, expandPane, pane, paneRows, runCommand } from "./workbench.mts";

export const LOCAL_MODEL = "tiny-local";
const TITLE = "on a local server";
const MESSAGE = "hello local server";
/** The simulator's echo (no scripted steps: bonsai's tool probe asks it first). */
const REPLY = `You said: ${MESSAGE}`;

function assert(condition: boolean, message: string): asserts condition {
  if (!condition) {
    throw new Error(message);
  }
}

/** A session on the simulator as an OpenAI-compatible server, with one finished turn. */
async function localSession(context: StepContext, simUrl: string): Promise<string> {
  const control = simUrl.replace(/\/v1\/?$/, "");
  const script = { usage: false, models: [LOCAL_MODEL] };
  const answer = await fetch(`${control}/_sim/script`, { method: "POST", body: JSON.stringify(script) });
  assert(answer.ok, `the simulator refused the script: ${answer.status} ${await answer.text()}`);
  const client = { provider: "openai-compatible", model: LOCAL_MODEL, baseUrl: simUrl, source: "e2e", names: [] };
  const { sessionId } = await context.daemon.request<{ sessionId: string }>("bonsai/session/create", {
    workspace: context.workspace,
    title: TITLE,
    client,
  });
  await context.daemon.request("bonsai/chat/send", { sessionId, text: MESSAGE, client });
  const deadline = Date.now() + 60_000;
  for (;;) {
    const { sessions } = await context.daemon.request<{ sessions: { sessionId: string; messageCount: number }[] }>(
      "bonsai/session/list",
      { workspace: context.workspace },
    );
    if ((sessions.find((s) => s.sessionId === sessionId)?.messageCount ?? 0) >= 2) {
      return sessionId;
    }
    assert(Date.now() < deadline, "the turn on the local server did not finish");
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const ledgerHeader: Step = {
  name: "ledger-header",
  async run(context) {
    const { page } = context;
    const simUrl = process.env.BONSAI_BASE_URL;
    assert(simUrl !== undefined, "BONSAI_BASE_URL (the simulator) is not set");
    await localSession(context, simUrl);
    // The chat tab of the previous step would take the palette's keys: close it.
    const chatTab = page.locator(".tabs-container .tab", { hasText: "bonsai chat" });
    if ((await chatTab.count()) > 0) {
      await closeTab(chatTab);
      await chatTab.waitFor({ state: "detached" });
    }
    await runCommand(page, "Switch Session");
    await page.locator(".quick-input-widget .monaco-list-row", { hasText: TITLE }).first().click();
    await chatFrame(page).locator(".entry.assistant:not(.streaming)", { hasText: REPLY }).first().waitFor();
    for (const other of ["Chat", "Memory", "Episodes", "Rules", "Conversation Tree"]) {
      await collapsePane(page, other);
    }
    await expandPane(page, "Context");
    const rows = paneRows(page, "Context");
    const window = rows.filter({ hasText: "window 8.2k · reserve 2k" }).filter({
      hasText: "from default for an unknown model",
    });
    await window.first().waitFor({ timeout: 60_000 });
    const note = `unknown window: set providers.models.${LOCAL_MODEL}.context_window`;
    const toolsNote = `${LOCAL_MODEL} on this server cannot call tools`;
    // The window note and the probe's tools note may arrive apart: wait for both.
    const message = pane(page, "Context").locator(".message", { hasText: note }).filter({ hasText: toolsNote });
    await message.waitFor();
    const shown = (await message.textContent())?.trim() ?? "";
    assert(shown.includes(`(assuming 8,192 tokens for '${LOCAL_MODEL}')`), `the note reads "${shown}"`);
    // The simulator answers the tool probe with text: the tools notice is in the header too.
    assert(shown.includes(toolsNote), `the notes read "${shown}"`);
    const totals = rows.filter({ hasText: "usable" }).first();
    const billed = totals.locator(".label-description", { hasText: "billed:" });
    await billed.waitFor(); // the totals row fills in once the turn's usage is in
    const description = (await billed.textContent())?.trim() ?? "";
    assert(
      /estimated [\d.]+k? · billed: not reported by the server/.test(description),
      `the totals row reads "${description}"`,
    );
    await page.locator(".part.sidebar").screenshot({ path: join(context.artifacts, "docs-ledger-local.png") });
    await expandPane(page, "Chat");
    return `window row "from default for an unknown model", the notes above the tree ("${shown.slice(0, 90)}…"), totals "${description}"`;
  },
};

export const HEADER_STEPS: readonly Step[] = [ledgerHeader];
