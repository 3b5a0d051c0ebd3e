/** The e2e steps, in order. Each waits on selectors or events, never on fixed sleeps. */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import type { DaemonClient } from "./daemonClient.mts";
import { APPROVAL_ITEM, SHARED_STEPS } from "./sharedSteps.mts";
import {
  STATUS_CHIP,
  chatFrame,
  collapsePane,
  contextMenu,
  expandPane,
  expandRow,
  openBonsai,
  pane,
  paneRows,
} from "./workbench.mts";

export interface StepContext {
  page: Page;
  url: string;
  /** The run's temp dir (user data, logs). */
  root: string;
  workspace: string;
  artifacts: string;
  daemon: DaemonClient;
  message: string;
  reply: string;
  /** The headless Neovim on the same daemon, driven over its --listen socket. */
  nvim?: { bin: string; socket: string };
  /** More browser pages (VS Code windows) opened by steps; the driver closes them. */
  extraPages: Page[];
}

export interface Step {
  name: string;
  run(context: StepContext): Promise<string>;
}

interface SessionInfo {
  sessionId: string;
  workspace: string;
  messageCount: number;
}
interface CtxNode {
  id: string;
  label: string;
  state: string;
  section: string;
}
interface Ledger {
  totals?: { percent: number } | null;
  nodes?: CtxNode[] | null;
}

async function currentSession(context: StepContext): Promise<SessionInfo> {
  const { sessions } = await context.daemon.request<{ sessions: SessionInfo[] }>("bonsai/session/list", {
    workspace: context.workspace,
  });
  const [session] = sessions;
  if (session === undefined) {
    throw new Error(`the daemon has no session for ${context.workspace}`);
  }
  return session;
}

async function ledger(context: StepContext): Promise<Ledger> {
  const { sessionId } = await currentSession(context);
  return context.daemon.request<Ledger>("bonsai/ctx/get", { sessionId, view: "ledger" });
}

function assert(condition: boolean, message: string): asserts condition {
  if (!condition) {
    throw new Error(message);
  }
}

const workbench: Step = {
  name: "workbench",
  async run({ page, url }) {
    await page.goto(url);
    await page.locator(".monaco-workbench").waitFor();
    await page.locator(STATUS_CHIP).waitFor();
    return `code-server at ${url} loaded the workbench and the bonsai extension`;
  },
};

const connect: Step = {
  name: "open-view",
  async run(context) {
    const { page, daemon } = context;
    await openBonsai(page);
    const chat = chatFrame(page);
    await chat.locator("#input").waitFor();
    await chat.locator("#status[hidden]").waitFor({ state: "attached" });
    await page.locator(STATUS_CHIP, { hasText: "▱" }).waitFor();
    const status = await daemon.request<{ version: string; clients: number }>("bonsai/daemon/status", {});
    assert(
      status.clients >= 2,
      `expected the extension and the e2e client on the daemon, saw ${status.clients} client(s)`,
    );
    return `chat view connected to bonsai ${status.version} (${status.clients} clients)`;
  },
};

const chatStep: Step = {
  name: "chat",
  async run(context) {
    const chat = chatFrame(context.page);
    await chat.locator("#input").fill(context.message);
    await chat.locator("#input").press("Enter");
    await chat.locator(".entry.user", { hasText: context.message }).waitFor();
    const reply = chat.locator(".entry.assistant:not(.streaming)", { hasText: context.reply });
    await reply.first().waitFor({ timeout: 60_000 });
    const updates = Number(await reply.first().getAttribute("data-updates"));
    assert(updates > 1, `the reply arrived in one piece (${updates} update), not streamed`);
    const session = await currentSession(context);
    assert(session.messageCount >= 2, `the daemon stored ${session.messageCount} message(s) for the session`);
    return `reply streamed in ${updates} updates; daemon session ${session.sessionId} has ${session.messageCount} messages`;
  },
};

/** The simulator answers this with an edit_file call; see tests/editors/test_vscode_e2e.py. */
export const EDIT_MESSAGE = "please fix the typo in notes.txt";

const approval: Step = {
  name: "approval",
  async run(context) {
    const notes = join(context.workspace, "notes.txt");
    writeFileSync(notes, "teh cat sat on the mat\n");
    const chat = chatFrame(context.page);
    await chat.locator("#input").fill(EDIT_MESSAGE);
    await chat.locator("#input").press("Enter");
    const card = chat.locator(".entry.approval.pending");
    await card.locator(".diff .add", { hasText: "the cat" }).first().waitFor({ timeout: 60_000 });
    // Review before approval: the native diff editor beside, a status-bar item and a badge.
    const diffTab = context.page.locator(".tabs-container .tab", { hasText: "notes.txt: proposed by bonsai" });
    await diffTab.waitFor();
    const proposed = context.page.locator(".monaco-diff-editor .modified-in-monaco-diff-editor .view-line", {
      hasText: "the cat sat on the mat",
    });
    await proposed.first().waitFor();
    await context.page
      .locator(".monaco-diff-editor .original-in-monaco-diff-editor .view-line", { hasText: "teh cat sat on the mat" })
      .first()
      .waitFor();
    await context.page.locator(APPROVAL_ITEM, { hasText: "approve edit_file notes.txt" }).waitFor();
    await context.page
      .locator('.activitybar .action-item:has(.action-label[aria-label^="bonsai"]) .badge-content', { hasText: "1" })
      .waitFor();
    await context.page.screenshot({ path: join(context.artifacts, "docs-approval.png") });
    await card.locator("button.approve").click();
    await diffTab.waitFor({ state: "detached" });
    await context.page.locator(APPROVAL_ITEM).waitFor({ state: "hidden" });
    await chat.locator(".entry.approval.approved").waitFor();
    await chat.locator(".entry.tool.ok", { hasText: "edit_file" }).first().waitFor({ timeout: 60_000 });
    await chat.locator("body:not(.busy)").waitFor({ state: "attached", timeout: 60_000 });
    const text = readFileSync(notes, "utf-8");
    assert(text === "the cat sat on the mat\n", `notes.txt after the approved edit: ${JSON.stringify(text)}`);
    return "edit diff inline and in the diff editor beside (closed on approval), status-bar item and badge while pending; the file changed";
  },
};

const slash: Step = {
  name: "slash-ctx",
  async run({ page }) {
    const chat = chatFrame(page);
    await chat.locator("#input").fill("/ctx");
    await chat.locator("#input").press("Enter");
    const notice = chat.locator(".entry.notice strong", { hasText: "Context" });
    await notice.first().waitFor();
    return "/ctx answered with a rendered ledger summary";
  },
};

const ledgerStep: Step = {
  name: "ledger",
  async run(context) {
    const { page } = context;
    const messages = paneRows(page, "Context").filter({ hasText: "Messages" });
    await messages.first().waitFor();
    await expandRow(messages.first());
    const nodes = paneRows(page, "Context").filter({ hasText: /· (full|pinned|stubbed|dropped|summarized|archived)/ });
    await nodes.first().waitFor();
    const daemonNodes = (await ledger(context)).nodes ?? [];
    assert(daemonNodes.length > 0, "the daemon's ledger is empty");
    await page.locator(".part.sidebar").screenshot({ path: join(context.artifacts, "docs-ledger.png") });
    return `ledger shows ${await nodes.count()} node rows; daemon reports ${daemonNodes.length} nodes`;
  },
};

const pin: Step = {
  name: "pin",
  async run(context) {
    const { page } = context;
    const candidates =
      (await ledger(context)).nodes?.filter((node) => node.section === "messages" && node.state === "full") ?? [];
    const target = candidates[0];
    assert(target !== undefined, "no message node in state 'full' to pin");
    const row = paneRows(page, "Context").filter({ hasText: target.label }).filter({ hasText: "· full" }).first();
    await contextMenu(page, row, target.label, "Pin (never collect)");
    await paneRows(page, "Context").filter({ hasText: target.label }).filter({ hasText: "· pinned" }).first().waitFor();
    const after = (await ledger(context)).nodes?.find((node) => node.id === target.id);
    assert(
      after?.state === "pinned",
      `the daemon reports node ${target.id} as ${after?.state ?? "missing"}, not pinned`,
    );
    return `pinned "${target.label}" from the context menu; the daemon confirms state=pinned`;
  },
};

const chip: Step = {
  name: "status-chip",
  async run(context) {
    const percent = Math.round((await ledger(context)).totals?.percent ?? Number.NaN);
    assert(Number.isFinite(percent), "the daemon reports no totals");
    const chipLocator = context.page.locator(STATUS_CHIP, { hasText: `${percent}%` });
    await chipLocator.waitFor();
    const text = (await chipLocator.textContent())?.trim() ?? "";
    assert(/[▰▱]{5} \d+%/.test(text), `unexpected chip text "${text}"`);
    return `status chip "${text}" matches the daemon's ${percent}%`;
  },
};

const views: Step = {
  name: "ledger-views",
  async run({ page }) {
    const header = page.locator('.pane-header[aria-label^="Context"]');
    const toggle = header.locator('.action-label[aria-label="Toggle Ledger / Wire / Turns"]');
    for (const view of ["wire", "turns", "ledger"]) {
      await header.hover();
      await toggle.click();
      await pane(page, "Context").locator(".pane-header .description", { hasText: view }).waitFor();
    }
    await paneRows(page, "Context").filter({ hasText: "Messages" }).first().waitFor();
    return "toggled ledger → wire → turns → ledger";
  },
};

const episodes: Step = {
  name: "episodes",
  async run(context) {
    const { page } = context;
    await expandPane(page, "Episodes");
    const { sessionId } = await currentSession(context);
    const { episodes: list } = await context.daemon.request<{ episodes: { number: number; title: string }[] }>(
      "bonsai/episodes/list",
      { sessionId },
    );
    if (list.length === 0) {
      await pane(page, "Episodes").locator(".message", { hasText: "No episodes yet" }).waitFor();
      return "episode list open; the daemon reports no episodes yet and the view says so";
    }
    const first = list[0];
    await paneRows(page, "Episodes")
      .filter({ hasText: `#${first?.number}` })
      .first()
      .waitFor();
    const rows = await paneRows(page, "Episodes").count();
    assert(rows === list.length, `the view shows ${rows} episodes, the daemon ${list.length}`);
    return `episode list shows ${rows} episode(s), as the daemon reports`;
  },
};

const otherWindow: Step = {
  name: "other-window",
  async run(context) {
    const { sessionId } = await currentSession(context);
    const text = "a note from another window";
    await context.daemon.request("bonsai/session/attach", { sessionId });
    await context.daemon.request("bonsai/session/append", { sessionId, role: "user", content: text });
    await chatFrame(context.page).locator(".entry.user", { hasText: text }).waitFor();
    return "a message another client appended to the session appeared in the chat live";
  },
};

/** A rule added from the Rules view's title action (the "+" of "Add a Rule"). */
export const RULE_TEXT = "Always run the tests with pytest -q";

const rules: Step = {
  name: "rules",
  async run(context) {
    const { page } = context;
    await expandPane(page, "Rules");
    const header = page.locator('.pane-header[aria-label^="Rules"]');
    await header.hover();
    await header.locator('.action-label[aria-label="Add a Rule"]').click();
    const input = page.locator(".quick-input-widget input");
    await input.fill(RULE_TEXT);
    await input.press("Enter");
    await paneRows(page, "Rules").filter({ hasText: RULE_TEXT }).first().waitFor();
    await pane(page, "Rules").locator(".message", { hasText: "1 of 1 rule on" }).waitFor();
    const { rules: stored } = await context.daemon.request<{ rules: { text: string; source: string }[] }>(
      "bonsai/rules/list",
      { workspace: context.workspace },
    );
    assert(
      stored.length === 1 && stored[0]?.text === RULE_TEXT && stored[0].source === "user",
      `the daemon stores ${JSON.stringify(stored)}`,
    );
    return `added "${RULE_TEXT}" from the Rules view; listed there and stored by the daemon`;
  },
};

/**
 * The simulator answers this with a bash test run that exits 1, then a final
 * reply, then (for the retry) a second attempt; see tests/editors/test_vscode_e2e.py.
 */
export const FAILING_MESSAGE = "make parse() return 4 and run the tests";
export const RETRY_REPLY = "Second attempt, with the reflection.";

const reflectOffer: Step = {
  name: "reflect-retry",
  async run(context) {
    const { page } = context;
    const chat = chatFrame(page);
    await chat.locator("#input").fill(FAILING_MESSAGE);
    await chat.locator("#input").press("Enter");
    const card = chat.locator(".entry.approval.pending");
    await card.first().waitFor({ timeout: 60_000 });
    await card.locator("button.approve").click();
    await chat.locator(".entry.tool", { hasText: "bash" }).first().waitFor({ timeout: 60_000 });
    const toast = page.locator(".notification-toast", { hasText: "the last turn failed (tests failing" });
    await toast.waitFor({ timeout: 60_000 });
    const offer = (await toast.locator(".notification-list-item-message").textContent())?.trim() ?? "";
    await toast.locator(".monaco-button", { hasText: "Retry with reflection" }).click();
    await toast.waitFor({ state: "detached" });
    await chat.locator(".entry.assistant:not(.streaming)", { hasText: RETRY_REPLY }).first().waitFor({
      timeout: 60_000,
    });
    return `offer "${offer}" shown; "Retry with reflection" clicked and the retry's reply arrived`;
  },
};

interface TreeNodeInfo {
  nodeId: string;
  parentId?: string | null;
  kind: string;
  label: string;
}

const conversationTree: Step = {
  name: "conversation-tree",
  async run(context) {
    const { page } = context;
    // The tree nests every message under the one before: give it the sidebar, so
    // that the two branches at its end are rendered (rows off screen are not).
    for (const other of ["Chat", "Context", "Episodes", "Rules"]) {
      await collapsePane(page, other);
    }
    await expandPane(page, "Conversation Tree");
    const rows = paneRows(page, "Conversation Tree").filter({ hasText: FAILING_MESSAGE });
    await rows.nth(1).waitFor();
    const levels = await rows.evaluateAll((els) => els.map((el) => el.getAttribute("aria-level")));
    assert(
      levels.length === 2 && levels[0] === levels[1],
      `the view shows the question at levels ${JSON.stringify(levels)}, not as two siblings`,
    );
    const { sessionId } = await currentSession(context);
    const tree = await context.daemon.request<{ nodes: TreeNodeInfo[] }>("bonsai/tree/get", { sessionId });
    const asked = tree.nodes.filter((node) => node.kind === "question" && node.label === FAILING_MESSAGE);
    assert(
      asked.length === 2 && (asked[0]?.parentId ?? null) === (asked[1]?.parentId ?? null),
      `the daemon's tree has ${JSON.stringify(asked)}`,
    );
    return `the Conversation Tree shows the failed question and its retry as siblings (level ${levels[0]}), as the daemon's tree does`;
  },
};

export const STEPS: readonly Step[] = [
  workbench,
  connect,
  chatStep,
  approval,
  slash,
  ledgerStep,
  pin,
  chip,
  views,
  episodes,
  otherWindow,
  rules,
  reflectOffer,
  conversationTree,
  ...SHARED_STEPS,
];
