/** Locators and small actions on the code-server workbench and the bonsai views. */
import type { FrameLocator, Locator, Page } from "playwright-core";

/** How long a wait for a condition may take: a ceiling for a loaded machine, never a pause. */
export const DEFAULT_WAIT_MS = 60_000;
export const STATUS_CHIP = '[id="bonsai.bonsai-vscode.bonsai.context"]';

export function pane(page: Page, title: string): Locator {
  return page.locator(".pane", { has: page.locator(`.pane-header[aria-label^="${title}"]`) });
}

export function paneRows(page: Page, title: string): Locator {
  return pane(page, title).locator(".monaco-list-row");
}

/** The chat webview's document (code-server nests it in two iframes). */
export function chatFrame(page: Page): FrameLocator {
  return page.frameLocator("iframe.webview.ready").frameLocator("#active-frame");
}

export async function openBonsai(page: Page): Promise<void> {
  await page.locator('.activitybar .action-label[aria-label^="bonsai"]').click();
  await pane(page, "Chat").waitFor();
}

/** Expand a collapsed view pane by clicking its header. */
export async function expandPane(page: Page, title: string): Promise<void> {
  const header = page.locator(`.pane-header[aria-label^="${title}"]`);
  if ((await header.getAttribute("aria-expanded")) !== "true") {
    await header.click();
  }
  await page.locator(`.pane-header[aria-label^="${title}"][aria-expanded="true"]`).waitFor();
}

/** Collapse a view pane by clicking its header, to give the others room. */
export async function collapsePane(page: Page, title: string): Promise<void> {
  const header = page.locator(`.pane-header[aria-label^="${title}"]`);
  if ((await header.getAttribute("aria-expanded")) === "true") {
    await header.click();
  }
  await page.locator(`.pane-header[aria-label^="${title}"][aria-expanded="false"]`).waitFor();
}

/**
 * Right-click the row labelled `label` and run a context-menu entry (hover focuses it,
 * Enter runs it). A tree refresh can recycle the row under the pointer, so the menu
 * is only used once the right-clicked row is the focused one; otherwise it retries.
 */
export async function contextMenu(page: Page, row: Locator, label: string, item: string): Promise<void> {
  const menu = page.locator(".context-view .monaco-menu");
  for (let attempt = 1; ; attempt++) {
    await row.click({ button: "right" });
    await menu.waitFor();
    const focused = page.locator(".monaco-list-row.focused", { hasText: label });
    if ((await focused.count()) > 0) {
      break;
    }
    await page.keyboard.press("Escape");
    await menu.waitFor({ state: "detached" });
    if (attempt === 3) {
      throw new Error(`could not open the context menu of "${label}"`);
    }
  }
  await menu.locator(".action-item", { hasText: item }).first().hover();
  await menu.locator(".action-item.focused", { hasText: item }).waitFor();
  await page.keyboard.press("Enter");
  await menu.waitFor({ state: "detached" });
}

/** Expand a tree row (a section) if it is collapsed. */
export async function expandRow(row: Locator): Promise<void> {
  if ((await row.getAttribute("aria-expanded")) === "false") {
    await row.click();
  }
}

/** Run a command from the palette (`category` as the palette shows it, e.g. "bonsai: "). */
export async function runCommand(page: Page, title: string, category = "bonsai: "): Promise<void> {
  // F1 must reach the workbench, not a focused webview: focus the editor area first.
  await page.locator(".part.editor").click({ position: { x: 40, y: 200 } });
  await page.keyboard.press("F1");
  await page.locator(".quick-input-widget input").fill(`>${category}${title}`);
  await page.locator(".quick-input-widget .monaco-list-row", { hasText: title }).first().click();
}

/** Open a workspace file by name from the quick-open list. */
export async function quickOpen(page: Page, name: string): Promise<void> {
  await page.locator(".part.editor").click({ position: { x: 40, y: 200 } });
  await page.keyboard.press("F1");
  await page.locator(".quick-input-widget input").fill(name);
  await page.locator(".quick-input-widget .monaco-list-row", { hasText: name }).first().waitFor();
  await page.keyboard.press("Enter");
}

/** Close an editor tab with its close button (shown on hover). */
export async function closeTab(tab: Locator): Promise<void> {
  await tab.hover();
  await tab.locator(".tab-actions .action-label").first().click();
}
