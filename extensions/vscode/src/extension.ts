/** Entry point: wires the connection, views and commands together. No logic lives here. */
import * as os from "node:os";
import * as vscode from "vscode";
import { ChatController } from "./chat/chatController";
import { registerConversationCommands } from "./conversation/conversationCommands";
import { ConversationProvider } from "./conversation/conversationProvider";
import { registerReflectOffers } from "./conversation/reflectOffer";
import { ApprovalReview, ApprovalStatus } from "./chat/approvalReview";
import { CHAT_VIEW_ID, ChatPanels, ChatViewProvider, registerChatPlacement } from "./chat/chatViewProvider";
import { registerEpisodeCommands } from "./episodes/episodeCommands";
import { EPISODES_VIEW_ID, EpisodesProvider } from "./episodes/episodesProvider";
import { registerCtxCommands } from "./ledger/ctxCommands";
import { CTX_SCHEME, CtxDocuments, registerSelectCommand } from "./ledger/ctxDocuments";
import { LEDGER_VIEW_ID, LedgerProvider } from "./ledger/ledgerProvider";
import { registerMemoryCommands } from "./memory/memoryCommands";
import { MEMORY_VIEW_ID, MemoryProvider } from "./memory/memoryProvider";
import { DaemonConnection } from "./rpc/connection";
import { registerConnectionCommands } from "./rpc/connectionCommands";
import { registerHandoff } from "./session/handoff";
import { registerSessionCommands } from "./session/sessionCommands";
import { Sessions } from "./session/sessions";
import { registerRulesCommands } from "./rules/rulesCommands";
import { RulesProvider } from "./rules/rulesProvider";
import { watchSettings } from "./settings/settingsSync";
import { StatusChip } from "./status/statusBar";

const VIEW_IDS = { ledger: LEDGER_VIEW_ID, episodes: EPISODES_VIEW_ID, memory: MEMORY_VIEW_ID } as const;

function workspaceRoot(): string {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? os.homedir();
}

function focus(viewId: string): void {
  void vscode.commands.executeCommand(`${viewId}.focus`);
}

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel("bonsai", { log: true });
  const connection = new DaemonConnection(output);
  const workspace = workspaceRoot();
  const sessions = new Sessions(connection, context.workspaceState, workspace);
  const ledger = new LedgerProvider(connection, sessions);
  const episodes = new EpisodesProvider(connection, sessions);
  const memory = new MemoryProvider(connection, workspace);
  const conversation = new ConversationProvider(connection, sessions);
  const rules = new RulesProvider(connection, workspace);
  const views = { ledger, episodes, memory };
  const review = new ApprovalReview(workspace);
  const approvalStatus = new ApprovalStatus();
  let chatView: ChatViewProvider | undefined;
  let panels: ChatPanels | undefined;
  const chat = new ChatController(connection, sessions, {
    reveal: (view) => {
      focus(VIEW_IDS[view]);
      void views[view].refresh();
    },
    revealChat: () => (panels?.isOpen ? panels.reveal() : focus(CHAT_VIEW_ID)),
    approvalsWaiting: (count, latest) => {
      chatView?.setBadge(count);
      approvalStatus.show(count, latest);
    },
    review: (params) => review.review(params),
    reviewDone: (approvalId) => void review.done(approvalId),
    warn: (message) => void vscode.window.showWarningMessage(message),
  });
  chatView = new ChatViewProvider(context.extensionUri, chat, output);
  panels = new ChatPanels(context.extensionUri, chat, output);
  const documents = new CtxDocuments(connection);

  context.subscriptions.push(
    output,
    { dispose: () => void connection.dispose() },
    ...chat.subscribe(),
    vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, chatView),
    panels,
    review,
    approvalStatus,
    ...registerChatPlacement(panels),
    ledger,
    episodes,
    memory,
    rules,
    new StatusChip(connection, sessions),
    documents,
    vscode.workspace.registerTextDocumentContentProvider(CTX_SCHEME, documents),
    registerSelectCommand(documents),
    connection.onServerRequest("bonsai/approval/request", (params, signal) => chat.requestApproval(params, signal)),
    connection.onDidChangeState((state) => state.kind === "running" && void sessions.restore()),
    registerHandoff(connection, sessions),
    conversation,
    registerReflectOffers(connection, sessions),
    ...registerConversationCommands(connection, conversation),
    ...registerConnectionCommands(connection, output),
    ...registerSessionCommands(sessions, connection),
    ...registerCtxCommands(connection, sessions, ledger),
    ...registerEpisodeCommands(connection, episodes, chat),
    ...registerMemoryCommands(connection, memory),
    ...registerRulesCommands(connection, rules),
    ...watchSettings(connection, workspace, output, () => connection.restart()),
  );
  void connection.start();
}
