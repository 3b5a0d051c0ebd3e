/**
 * Review before approval: an edit's proposed text opens in the native diff
 * editor beside the chat (left: the file as it is, right: after the edit), and
 * unsaved changes to that file in this window are flagged on the card (the
 * diff is then against the file on disk, what the edit applies to). The
 * diff tab closes when the approval is resolved (here or in another window).
 */
import * as vscode from "vscode";
import type { ApprovalRequestParams } from "../protocol.generated";

export const PROPOSED_SCHEME = "bonsai-proposed";

export class ApprovalReview implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private readonly byApproval = new Map<string, vscode.Uri>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly registration = vscode.workspace.registerTextDocumentContentProvider(PROPOSED_SCHEME, this);

  constructor(private readonly workspace: string) {}

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? "";
  }

  /** Open the diff (when the daemon sent the proposed text); the warning for the card, if any. */
  review(params: ApprovalRequestParams): string | undefined {
    if (!params.path) {
      return undefined;
    }
    const file = vscode.Uri.joinPath(vscode.Uri.file(this.workspace), params.path);
    const dirty = vscode.workspace.textDocuments.some((doc) => doc.uri.fsPath === file.fsPath && doc.isDirty);
    if (params.proposed != null) {
      void this.openDiff(params, file, params.proposed, dirty);
    }
    return dirty
      ? `${params.path} has unsaved changes in this window: save or revert them first, or they will conflict with the edit.`
      : undefined;
  }

  private async openDiff(
    params: ApprovalRequestParams,
    file: vscode.Uri,
    proposed: string,
    dirty: boolean,
  ): Promise<void> {
    const id = params.approvalId ?? params.turnId;
    const right = vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: `/${id}/${params.path}` });
    this.texts.set(right.toString(), proposed);
    this.byApproval.set(id, right);
    let left = file;
    try {
      const saved = await vscode.workspace.fs.readFile(file);
      if (dirty) {
        // The editor holds unsaved changes the agent cannot see: diff against the file on disk,
        // which is what the edit applies to (the card says the buffer differs).
        left = vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: `/${id}/on-disk/${params.path}` });
        this.texts.set(left.toString(), new TextDecoder().decode(saved));
      }
    } catch {
      left = vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: `/${id}/empty/${params.path}` });
    }
    const title = `${params.path}: proposed by bonsai`;
    await vscode.commands.executeCommand("vscode.diff", left, right, title, {
      viewColumn: vscode.ViewColumn.Beside,
      preview: true,
      preserveFocus: true,
    });
  }

  /** The approval was answered: close its diff tab. */
  async done(approvalId: string): Promise<void> {
    const right = this.byApproval.get(approvalId);
    if (right === undefined) {
      return;
    }
    this.byApproval.delete(approvalId);
    const tabs = vscode.window.tabGroups.all.flatMap((group) => group.tabs);
    const open = tabs.filter(
      (tab) => tab.input instanceof vscode.TabInputTextDiff && tab.input.modified.toString() === right.toString(),
    );
    await vscode.window.tabGroups.close(open, true);
    const prefix = vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: `/${approvalId}/` }).toString();
    for (const key of [...this.texts.keys()].filter((uri) => uri.startsWith(prefix))) {
      this.texts.delete(key);
    }
  }

  dispose(): void {
    this.registration.dispose();
    this.changed.dispose();
  }
}

/** The status-bar item shown while an approval waits in this window. */
export class ApprovalStatus implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("bonsai.approval", vscode.StatusBarAlignment.Right, 101);

  constructor() {
    this.item.name = "bonsai approval";
    this.item.command = "bonsai.chat.focus";
    this.item.backgroundColor = new vscode.ThemeColor("statusBarItem.warningBackground");
  }

  show(count: number, latest: string | undefined): void {
    if (count === 0) {
      this.item.hide();
      return;
    }
    this.item.text = `$(bell-dot) bonsai: approve ${latest ?? "a tool call"}${count > 1 ? ` (+${count - 1})` : ""}`;
    this.item.tooltip = `${count} approval${count > 1 ? "s" : ""} waiting in the bonsai chat: click to show it`;
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
  }
}
