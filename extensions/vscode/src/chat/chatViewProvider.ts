/** The chat WebviewView: HTML shell, message plumbing to the ChatController. */
import * as vscode from "vscode";
import { chatHtml, makeNonce } from "./chatHtml";
import type { ChatController, ChatPort } from "./chatController";
import { parseFromWebview } from "./messages";

export const CHAT_VIEW_ID = "bonsai.chat";

export class ChatViewProvider implements vscode.WebviewViewProvider {
  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly controller: ChatController,
    private readonly output: vscode.LogOutputChannel,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    const webview = view.webview;
    const out = vscode.Uri.joinPath(this.extensionUri, "out");
    const media = vscode.Uri.joinPath(this.extensionUri, "media");
    webview.options = { enableScripts: true, localResourceRoots: [out, media] };
    webview.html = chatHtml({
      nonce: makeNonce(),
      cspSource: webview.cspSource,
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(out, "webview.js")).toString(),
      styleUri: webview.asWebviewUri(vscode.Uri.joinPath(media, "chat.css")).toString(),
    });
    const port: ChatPort = { post: (message) => void webview.postMessage(message) };
    this.controller.attachPort(port);
    const receiver = webview.onDidReceiveMessage((raw: unknown) => {
      const message = parseFromWebview(raw);
      if (message === undefined) {
        this.output.warn(`bonsai: ignored an invalid message from the chat view: ${JSON.stringify(raw)}`);
        return;
      }
      void this.controller.handle(message);
    });
    const visibility = view.onDidChangeVisibility(() => view.visible && void this.controller.refreshSessions());
    view.onDidDispose(() => {
      visibility.dispose();
      receiver.dispose();
      this.controller.detachPort(port);
    });
  }
}
