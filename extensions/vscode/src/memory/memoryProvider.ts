/** The memory TreeView: user and project entries of this workspace. */
import type { Rpc } from "../rpc/rpc";
import { type ListContent, RpcListView } from "../tree/rpcListView";
import { memoryNodes } from "./memoryModel";

export const MEMORY_VIEW_ID = "bonsai.memory";

export class MemoryProvider extends RpcListView {
  constructor(
    rpc: Rpc,
    readonly workspace: string,
  ) {
    super(MEMORY_VIEW_ID, rpc, "memory");
    this.disposables.push(
      rpc.onNotification("bonsai/config/changed", () => void this.refresh()),
      // the model remembers with its memory_write tool
      rpc.onNotification("bonsai/chat/event", (event) => {
        if (event.kind === "toolResult" && event.name === "memory_write") {
          this.scheduleRefresh();
        }
      }),
      this.view.onDidChangeVisibility((event) => event.visible && void this.refresh()),
    );
  }

  protected async load(): Promise<ListContent> {
    const result = await this.rpc.request("bonsai/memory/list", { workspace: this.workspace });
    const notes = [...(result.issues ?? []), ...(result.advisory ? [result.advisory] : [])];
    return { roots: memoryNodes(result.entries), message: notes.length > 0 ? notes.join(" · ") : undefined };
  }
}
