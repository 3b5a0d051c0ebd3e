/** The conversation tree view: refreshed on bonsai/tree/changed and on new messages. */
import type { Rpc } from "../rpc/rpc";
import type { Sessions } from "../session/sessions";
import { type ListContent, RpcListView } from "../tree/rpcListView";
import { conversationNodes } from "./conversationModel";

export const CONVERSATION_VIEW_ID = "bonsai.conversation";

export class ConversationProvider extends RpcListView {
  constructor(
    rpc: Rpc,
    private readonly sessions: Sessions,
  ) {
    super(CONVERSATION_VIEW_ID, rpc, "the conversation tree");
    const mine = (event: { sessionId: string }): boolean => event.sessionId === sessions.sessionId;
    this.disposables.push(
      rpc.onNotification("bonsai/tree/changed", (event) => mine(event) && this.scheduleRefresh()),
      rpc.onNotification("bonsai/session/event", (event) => mine(event) && this.scheduleRefresh()),
      sessions.onDidChange(() => this.scheduleRefresh()),
    );
  }

  protected override waitingFor(): string | undefined {
    return this.sessions.sessionId === undefined ? "No session yet." : undefined;
  }

  protected async load(): Promise<ListContent> {
    const sessionId = this.sessions.sessionId as string;
    const tree = await this.rpc.request("bonsai/tree/get", { sessionId });
    return {
      roots: conversationNodes(sessionId, tree),
      message: tree.nodes.length === 0 ? "No messages yet." : undefined,
    };
  }
}
