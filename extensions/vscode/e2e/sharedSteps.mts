/**
 * The e2e steps of issue 21: one session in two VS Code windows and one Neovim
 * (all through the shared daemon), review before approval, recalled memory as a
 * chip, code blocks that keep their underscores, the Memory view refreshing,
 * the daemon found without bonsai.command, and the chat in an editor tab.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Page } from "playwright-core";
import type { Step, StepContext } from "./steps.mts";
import { chatFrame, collapsePane, DEFAULT_WAIT_MS, expandPane, pane, paneRows, runCommand } from "./workbench.mts";

const run = promisify(execFile);

/** The simulator answers this with a reply holding inline code and a Python block. */
export const CODE_MESSAGE = "how should the cart quantity tests look?";
export const CODE_REPLY_NAME = "test_total_counts_quantity";
/** The simulator answers this with a bash call, approved in the second window. */
export const SHARED_MESSAGE = "run the shared check";
export const SHARED_DONE = "The shared check ran.";
export const APPROVAL_ITEM = '[id="bonsai.bonsai-vscode.bonsai.approval"]';

function assert(condition: boolean, message: string): asserts condition {
  if (!condition) {
    throw new Error(message);
  }
}

async function sessionId(context: StepContext): Promise<string> {
  const { sessions } = await context.daemon.request<{ sessions: { sessionId: string }[] }>("bonsai/session/list", {
    workspace: context.workspace,
  });
  const id = sessions[0]?.sessionId;
  assert(id !== undefined, "no session");
  return id;
}

/** Evaluate Lua in the e2e's Neovim (`nvim --server … --remote-expr`). */
export async function nvimLua(context: StepContext, lua: string): Promise<string> {
  const nvim = context.nvim;
  assert(nvim !== undefined, "no Neovim in this run");
  const expr = `luaeval(${JSON.stringify(lua)})`;
  const { stdout } = await run(nvim.bin, ["--headless", "--server", nvim.socket, "--remote-expr", expr], {
    env: process.env,
    timeout: 60_000,
  });
  return stdout.trim();
}

async function nvimWait(context: StepContext, lua: string, what: string, timeoutMs = 60_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await nvimLua(context, lua);
    if (value !== "" && value !== "v:false" && value !== "0") {
      return value;
    }
    if (Date.now() > deadline) {
      throw new Error(`Neovim: timed out waiting for ${what} (last: ${value})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const findDaemon: Step = {
  name: "find-daemon",
  async run(context) {
    const logs = join(context.root, "user-data", "logs");
    const found = await run("grep", ["-rh", "bonsai.command is not set: using", logs]).catch(() => ({ stdout: "" }));
    const line = found.stdout.trim().split("\n")[0] ?? "";
    const venv = join(context.workspace, ".venv", "bin", "bonsai");
    assert(line.includes(`the workspace's .venv (${venv})`), `the extension log says: ${JSON.stringify(line)}`);
    return `no bonsai.command set: the extension started ${venv} and logged "${line.replace(/^.*using/, "using")}"`;
  },
};

const codeAndRecall: Step = {
  name: "code-recalled",
  async run(context) {
    const { page } = context;
    await collapsePane(page, "Conversation Tree");
    await expandPane(page, "Chat");
    const chat = chatFrame(page);
    await chat.locator("#input").fill(CODE_MESSAGE);
    await chat.locator("#input").press("Enter");
    const reply = chat.locator(".entry.assistant:not(.streaming)", { hasText: CODE_REPLY_NAME }).last();
    await reply.waitFor({ timeout: 60_000 });
    const chip = chat.locator(".entry.recalled .recalled-chip", { hasText: "cart-tests" });
    await chip.first().waitFor();
    const chipText = (await chip.first().locator("summary").textContent()) ?? "";
    assert(chipText.includes("cart-tests"), `the recalled chip says "${chipText}"`);
    const users = await chat.locator(".entry.user").allTextContents();
    assert(
      users.every((text) => !text.includes("background-data")),
      `a user message shows the raw note: ${JSON.stringify(users)}`,
    );
    const inline = reply.locator("p code", { hasText: CODE_REPLY_NAME }).first();
    const text = (await inline.textContent()) ?? "";
    assert(text === CODE_REPLY_NAME, `inline code reads "${text}"`);
    // The inline code's background stays inside its own line: it cannot cover the line above.
    const fits = await inline.evaluate((el) => {
      const box = el.getBoundingClientRect();
      const line = parseFloat(getComputedStyle(el.parentElement as HTMLElement).lineHeight);
      return { height: box.height, line };
    });
    assert(fits.height <= fits.line + 0.5, `inline code is ${fits.height}px tall in ${fits.line}px lines`);
    const block = reply.locator("pre.hljs code.language-python");
    await block.locator(".hljs-keyword", { hasText: "def" }).first().waitFor();
    const blockText = (await block.textContent()) ?? "";
    assert(blockText.includes(`def ${CODE_REPLY_NAME}():`), `the code block reads ${JSON.stringify(blockText)}`);
    const diffAdd = reply.locator("pre.diff .add");
    await diffAdd.first().waitFor();
    await chip.first().click(); // open the chip for the picture
    await reply.scrollIntoViewIfNeeded();
    await page.locator(".part.sidebar").screenshot({ path: join(context.artifacts, "docs-chat.png") });
    return `recalled chip "${chipText.trim()}"; inline code "${text}" ${fits.height}px in ${fits.line}px lines; python highlighted; diff coloured`;
  },
};

const memoryRefresh: Step = {
  name: "memory-refresh",
  async run({ page }) {
    await expandPane(page, "Memory");
    const project = paneRows(page, "Memory").filter({ hasText: "Project" }).first();
    // the entry count, once the row shows one (an empty description would read as 0)
    const count = project.locator(".label-description", { hasText: /^\s*\d+\s*$/ });
    await count.waitFor();
    const before = Number((await count.textContent()) ?? "NaN");
    const header = page.locator('.pane-header[aria-label^="Memory"]');
    await header.hover();
    await header.locator('.action-label[aria-label="Remember a Fact"]').click();
    const input = page.locator(".quick-input-widget input");
    await input.fill("The cart tests run with pytest -q tests/test_cart.py");
    await input.press("Enter");
    await page.locator(".quick-input-widget .monaco-list-row", { hasText: "project" }).first().click();
    const after = String(before + 1);
    await paneRows(page, "Memory")
      .filter({ hasText: "Project" })
      .locator(".label-description", { hasText: after })
      .first()
      .waitFor();
    return `"+" in the Memory view: Project went from ${before} to ${after} entries at once`;
  },
};

async function secondWindow(context: StepContext, sid: string): Promise<Page> {
  const page = await context.page.context().newPage();
  page.setDefaultTimeout(DEFAULT_WAIT_MS);
  await page.goto(context.url);
  await page.locator(".monaco-workbench").waitFor();
  await page.locator('.activitybar .action-label[aria-label^="bonsai"]').click();
  await pane(page, "Chat").waitFor();
  const chat = chatFrame(page);
  await chat.locator(`#session option[value="${sid}"]`).waitFor({ state: "attached" });
  await chat.locator("#session").selectOption(sid);
  await chat.locator(".entry.user", { hasText: CODE_MESSAGE }).first().waitFor();
  return page;
}

const sharedApproval: Step = {
  name: "shared-approval",
  async run(context) {
    const sid = await sessionId(context);
    const other = await secondWindow(context, sid);
    context.extraPages.push(other);
    await nvimLua(context, `require('bonsai.chat').open({ session_id = '${sid}' }) or true`);
    await nvimWait(
      context,
      `(function() local b = vim.fn.bufnr('bonsai://chat/${sid}'); return b ~= -1 and #vim.api.nvim_buf_get_lines(b, 0, -1, false) > 3 end)()`,
      "the Neovim chat",
    );
    const first = chatFrame(context.page);
    const secondChat = chatFrame(other);
    // Window 2's user has scrolled up to read: the approval must still come into view.
    const log = secondChat.locator("#log");
    const scrolled = await log.evaluate((el) => {
      el.scrollTop = 0;
      return { overflow: el.scrollHeight - el.clientHeight, top: el.scrollTop };
    });
    assert(scrolled.overflow > 200 && scrolled.top === 0, `window 2's chat cannot scroll: ${JSON.stringify(scrolled)}`);
    await first.locator("#input").fill(SHARED_MESSAGE);
    await first.locator("#input").press("Enter");
    const otherCard = secondChat.locator(".entry.approval.pending");
    await otherCard.locator("pre.command", { hasText: "$ echo shared" }).waitFor({ timeout: 60_000 });
    const inView = await otherCard.evaluate((card) => {
      const box = card.getBoundingClientRect();
      const area = (card.closest("#log") as HTMLElement).getBoundingClientRect();
      return box.top >= area.top - 1 && box.bottom <= area.bottom + 1;
    });
    assert(inView, "window 2 did not scroll its chat to the pending approval");
    // The command's directory (a long path in a narrow side bar) wraps inside the card.
    const where = await otherCard.locator(".where").evaluate((el) => ({
      content: el.scrollWidth,
      shown: el.clientWidth,
    }));
    assert(where.content <= where.shown, `the directory runs out of the approval card: ${JSON.stringify(where)}`);
    await first.locator(".entry.approval.pending").waitFor();
    await context.page.locator(APPROVAL_ITEM, { hasText: "approve bash" }).waitFor();
    // One evaluation: the prompt is up and the statusline says so (read apart, they race a redraw).
    await nvimWait(
      context,
      "require('bonsai.approval').count() == 1 and require('bonsai').statusline():find('approval waiting', 1, true) and require('bonsai').statusline()",
      "the Neovim prompt and its statusline flag",
    );
    await otherCard.locator("button.approve").click();
    await secondChat.locator(".entry.approval.approved .verdict", { hasText: /^Approved$/ }).waitFor();
    const verdict = first.locator(".entry.approval.approved .verdict", { hasText: "Approved in VS Code window" });
    await verdict.waitFor();
    assert((await first.locator(".entry.approval.pending").count()) === 0, "window 1 still shows a pending card");
    await context.page.locator(APPROVAL_ITEM).waitFor({ state: "hidden" });
    await nvimWait(context, "require('bonsai.approval').count() == 0", "Neovim to close its prompt");
    const note = await nvimWait(
      context,
      `(function() local b = vim.fn.bufnr('bonsai://chat/${sid}'); for _, l in ipairs(vim.api.nvim_buf_get_lines(b, 0, -1, false)) do if l:find('approved bash in VS Code window', 1, true) then return l end end return '' end)()`,
      "the Neovim note",
    );
    const floats = await nvimLua(
      context,
      "#vim.tbl_filter(function(w) return vim.api.nvim_win_get_config(w).relative ~= '' end, vim.api.nvim_list_wins())",
    );
    assert(floats === "0", `Neovim still shows ${floats} prompt float(s)`);
    await first
      .locator(".entry.assistant:not(.streaming)", { hasText: SHARED_DONE })
      .first()
      .waitFor({ timeout: 60_000 });
    const shown = (await verdict.textContent())?.trim() ?? "";
    return `window 2 scrolled to the card; approved there: window 1 shows "${shown}", Neovim closed its prompt and noted "${note.trim()}"`;
  },
};

const placement: Step = {
  name: "chat-in-editor",
  async run({ page }) {
    // The secondary side bar, and back: the chat moves with its conversation.
    await runCommand(page, "Move Chat to the Secondary Side Bar");
    const secondary = page.locator(".part.auxiliarybar");
    await secondary.waitFor();
    // Webviews are drawn over their part: the chat's must now lie inside the secondary side bar.
    const moved = chatFrame(page);
    await moved.locator(".entry.assistant", { hasText: SHARED_DONE }).first().waitFor();
    const area = await secondary.boundingBox();
    const frame = await page.locator("iframe.webview.ready").first().boundingBox();
    assert(
      area !== null && frame !== null && frame.x >= area.x - 1 && frame.x + frame.width <= area.x + area.width + 1,
      `the chat webview at ${JSON.stringify(frame)} is not in the secondary side bar ${JSON.stringify(area)}`,
    );
    await runCommand(page, "Move Chat back to the bonsai Side Bar");
    await page.locator(".part.sidebar").locator('.pane-header[aria-label^="Chat"]').waitFor();
    await secondary.waitFor({ state: "hidden" }); // not left open and empty
    await runCommand(page, "Open Chat in an Editor Tab");
    await page.locator(".tabs-container .tab", { hasText: "bonsai chat" }).waitFor();
    const tabChat = page.frameLocator("iframe.webview.ready").last().frameLocator("#active-frame");
    await tabChat.locator(".entry.assistant", { hasText: SHARED_DONE }).first().waitFor();
    return "the chat moved to the secondary side bar and back, and opened in an editor tab, with the whole conversation";
  },
};

export const SHARED_STEPS: readonly Step[] = [findDaemon, codeAndRecall, memoryRefresh, sharedApproval, placement];

/** The memory entry the code question recalls. */
export const MEMORY_ENTRY = `---
name: cart-tests
description: How the cart quantity tests are written
type: project
---
Cart quantity tests call total() with (price, quantity) pairs.
`;

export function readLog(path: string): string {
  try {
    return readFileSync(path, "utf-8");
  } catch {
    return "";
  }
}
