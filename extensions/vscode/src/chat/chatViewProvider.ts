/**
 * The chat webview, wherever it lives: the Chat view (side bar or, after
 * "bonsai: Move Chat to the Secondary Side Bar", the secondary side bar) and
 * the chat in an editor tab ("bonsai: Open Chat in an Editor Tab"). Every one
 * is a port of the same ChatController.
 */
import * as vscode from "vscode";
import { chatHtml, makeNonce } from "./chatHtml";
import type { ChatController, ChatPort } from "./chatController";
import { parseFromWebview } from "./messages";

export const CHAT_VIEW_ID = "bonsai.chat";
export const CHAT_PANEL_TYPE = "bonsai.chatPanel";
/** The side bar container and the secondary side bar one the chat can move between. */
export const SIDEBAR_CONTAINER = "workbench.view.extension.bonsai";
export const SECONDARY_CONTAINER = "workbench.view.extension.bonsai-chat";

/** Load the chat into a webview and plumb its messages to the controller. */
function wire(
  webview: vscode.Webview,
  extensionUri: vscode.Uri,
  controller: ChatController,
  output: vscode.LogOutputChannel,
): vscode.Disposable {
  const out = vscode.Uri.joinPath(extensionUri, "out");
  const media = vscode.Uri.joinPath(extensionUri, "media");
  webview.options = { enableScripts: true, localResourceRoots: [out, media] };
  webview.html = chatHtml({
    nonce: makeNonce(),
    cspSource: webview.cspSource,
    scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(out, "webview.js")).toString(),
    styleUri: webview.asWebviewUri(vscode.Uri.joinPath(media, "chat.css")).toString(),
  });
  const port: ChatPort = { post: (message) => void webview.postMessage(message) };
  controller.attachPort(port);
  const receiver = webview.onDidReceiveMessage((raw: unknown) => {
    const message = parseFromWebview(raw);
    if (message === undefined) {
      output.warn(`bonsai: ignored an invalid message from the chat view: ${JSON.stringify(raw)}`);
      return;
    }
    void controller.handle(message);
  });
  return {
    dispose: () => {
      receiver.dispose();
      controller.detachPort(port);
    },
  };
}

export class ChatViewProvider implements vscode.WebviewViewProvider {
  private view: vscode.WebviewView | undefined;
  private waiting = 0;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly controller: ChatController,
    private readonly output: vscode.LogOutputChannel,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const wiring = wire(view.webview, this.extensionUri, this.controller, this.output);
    this.setBadge(this.waiting);
    const visibility = view.onDidChangeVisibility(() => view.visible && void this.controller.refreshSessions());
    view.onDidDispose(() => {
      visibility.dispose();
      wiring.dispose();
      if (this.view === view) {
        this.view = undefined;
      }
    });
  }

  /** The number of approvals waiting, as a badge on the view (and its container). */
  setBadge(count: number): void {
    this.waiting = count;
    if (this.view !== undefined) {
      this.view.badge =
        count > 0 ? { value: count, tooltip: `${count} approval${count > 1 ? "s" : ""} waiting` } : undefined;
    }
  }
}

/** The chat in an editor tab (one at a time), so the side bar is left to the ledger and lists. */
export class ChatPanels implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly controller: ChatController,
    private readonly output: vscode.LogOutputChannel,
  ) {}

  open(): void {
    if (this.panel !== undefined) {
      this.panel.reveal();
      return;
    }
    const panel = vscode.window.createWebviewPanel(CHAT_PANEL_TYPE, "bonsai chat", vscode.ViewColumn.Active, {
      retainContextWhenHidden: true,
    });
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, "media", "bonsai.svg");
    const wiring = wire(panel.webview, this.extensionUri, this.controller, this.output);
    this.panel = panel;
    panel.onDidDispose(() => {
      wiring.dispose();
      this.panel = undefined;
    });
  }

  get isOpen(): boolean {
    return this.panel !== undefined;
  }

  reveal(): void {
    this.panel?.reveal(undefined, true);
  }

  dispose(): void {
    this.panel?.dispose();
  }
}

export function registerChatPlacement(panels: ChatPanels): vscode.Disposable[] {
  const move = (destinationId: string) => async (): Promise<void> => {
    await vscode.commands.executeCommand("vscode.moveViews", { viewIds: [CHAT_VIEW_ID], destinationId });
    if (destinationId === SIDEBAR_CONTAINER) {
      // The secondary side bar showed the chat's (now empty) container: close it rather than leave a blank bar.
      await vscode.commands.executeCommand("workbench.action.closeAuxiliaryBar");
    }
    await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
  };
  return [
    vscode.commands.registerCommand("bonsai.chat.openInEditor", () => panels.open()),
    vscode.commands.registerCommand("bonsai.chat.moveToSecondarySideBar", move(SECONDARY_CONTAINER)),
    vscode.commands.registerCommand("bonsai.chat.moveToSideBar", move(SIDEBAR_CONTAINER)),
  ];
}
