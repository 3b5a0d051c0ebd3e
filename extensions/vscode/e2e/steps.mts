/** The e2e steps, in order. Each waits on selectors or events, never on fixed sleeps. */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import type { DaemonClient } from "./daemonClient.mts";
import { CONNECTION_STEPS } from "./connectionSteps.mts";
import { HEADER_STEPS } from "./ledgerHeader.mts";
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
  quickOpen,
  closeTab,
  runCommand,
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
  step?: string | null;
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
    const { page } = context;
    const notes = join(context.workspace, "notes.txt");
    writeFileSync(notes, "teh cat sat on the mat\n");
    // The user has unsaved changes in the file the edit will change: the card says so before the approval.
    await quickOpen(page, "notes.txt");
    const notesTab = page.locator(".tabs-container .tab", { hasText: /^notes\.txt/ });
    await notesTab.waitFor();
    await page.locator(".part.editor .monaco-editor .view-lines").first().click();
    await page.keyboard.press("End");
    await page.keyboard.type(" (draft)");
    await page.locator(".tabs-container .tab.dirty", { hasText: "notes.txt" }).waitFor();
    const chat = chatFrame(page);
    await chat.locator("#input").fill(EDIT_MESSAGE);
    await chat.locator("#input").press("Enter");
    const card = chat.locator(".entry.approval.pending");
    await card.locator(".diff .add", { hasText: "the cat" }).first().waitFor({ timeout: 60_000 });
    const warning = (await card.locator(".warning").textContent())?.trim() ?? "";
    assert(
      warning.startsWith("notes.txt has unsaved changes in this window"),
      `the pending card warns "${warning}", not about the unsaved notes.txt`,
    );
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
    // The diff is against the file on disk (what the edit applies to), not the unsaved draft.
    const original = await context.page
      .locator(".monaco-diff-editor .original-in-monaco-diff-editor .view-lines")
      .first()
      .textContent();
    assert(!(original ?? "").includes("(draft)"), `the diff's left side shows the unsaved draft: "${original}"`);
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
    // Dropping the draft shows the agent's edit: VS Code's document follows the disk.
    await notesTab.click();
    await runCommand(page, "File: Revert File", "");
    await page.locator(".tabs-container .tab.dirty", { hasText: "notes.txt" }).waitFor({ state: "detached" });
    await page
      .locator(".part.editor .monaco-editor .view-line", { hasText: "the cat sat on the mat" })
      .first()
      .waitFor();
    await closeTab(notesTab);
    await notesTab.waitFor({ state: "detached" });
    return `unsaved changes flagged ("${warning}"); edit diff inline and in the diff editor beside (closed on approval), status-bar item and badge while pending; the file changed`;
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

/** The simulator's edit_file step: a call and its result, which cannot be dropped alone. */
const dropStep: Step = {
  name: "drop-step",
  async run(context) {
    const { page } = context;
    const nodes = (await ledger(context)).nodes ?? [];
    const result = nodes.find((node) => node.step && node.state === "full");
    const head = nodes.find((node) => node.id === result?.step);
    assert(result !== undefined && head !== undefined, `no tool result with its call in ${JSON.stringify(nodes)}`);
    const row = (node: CtxNode, state: string) =>
      paneRows(page, "Context")
        .filter({ hasText: node.label })
        .filter({ hasText: `· ${state}` })
        .first();
    const states = async () => {
      const now = (await ledger(context)).nodes ?? [];
      return [result.id, head.id].map((id) => now.find((node) => node.id === id)?.state).join(",");
    };
    const until = async (wanted: string, what: string) => {
      const deadline = Date.now() + 60_000;
      for (let seen = await states(); seen !== wanted; seen = await states()) {
        assert(Date.now() < deadline, `${what}: the daemon reports the result,call as ${seen}`);
        await page.waitForTimeout(100);
      }
    };
    // The ledger's rows are rendered only when on screen: give the Context pane the side bar.
    await collapsePane(page, "Chat");
    // Dropping the result alone is refused, in words, and the refusal offers the step.
    await contextMenu(page, row(result, "full"), result.label, "Drop from Context");
    const toast = page.locator(".notification-toast", { hasText: "dropping it alone" });
    await toast.waitFor();
    const refusal = (await toast.locator(".notification-list-item-message").textContent())?.trim() ?? "";
    assert(!/\b[a-z]{1,3}_[0-9a-f]{8,}\b/.test(refusal), `the refusal shows an id: "${refusal}"`);
    await toast.locator(".monaco-button", { hasText: "Drop the Whole Step" }).click();
    await until("dropped,dropped", "Drop the Whole Step from the refusal");
    await row(result, "dropped").waitFor();
    // Restore brings the step back; the context menu drops it again directly.
    await contextMenu(page, row(head, "dropped"), head.label, "Restore Original");
    await until("full,full", "Restore Original on the call");
    await contextMenu(page, row(result, "full"), result.label, "Drop the Whole Step");
    await until("dropped,dropped", "Drop the Whole Step from the context menu");
    await row(head, "dropped").waitFor();
    await expandPane(page, "Chat");
    return `"${result.label}" alone refused ("${refusal}"); Drop the Whole Step (from the refusal, then the menu) dropped it with "${head.label}"`;
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
    // rows render as the tree fills in: wait (bounded) for as many as the daemon lists
    const deadline = Date.now() + 60_000;
    let rows = await paneRows(page, "Episodes").count();
    while (rows !== list.length && Date.now() < deadline) {
      await page.waitForTimeout(100);
      rows = await paneRows(page, "Episodes").count();
    }
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
  dropStep,
  episodes,
  otherWindow,
  rules,
  reflectOffer,
  conversationTree,
  ...SHARED_STEPS,
  ...HEADER_STEPS,
  ...CONNECTION_STEPS,
];
