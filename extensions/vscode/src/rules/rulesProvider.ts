/** The rules TreeView: this workspace's standing instructions for the agent. */
import type { Rpc } from "../rpc/rpc";
import { type ListContent, RpcListView } from "../tree/rpcListView";
import { ruleNodes, rulesMessage } from "./rulesModel";

export const RULES_VIEW_ID = "bonsai.rules";

export class RulesProvider extends RpcListView {
  constructor(
    rpc: Rpc,
    readonly workspace: string,
  ) {
    super(RULES_VIEW_ID, rpc, "rules");
    this.disposables.push(
      rpc.onNotification("bonsai/rules/changed", () => void this.refresh()),
      this.view.onDidChangeVisibility((event) => event.visible && void this.refresh()),
    );
  }

  protected async load(): Promise<ListContent> {
    const result = await this.rpc.request("bonsai/rules/list", { workspace: this.workspace });
    return { roots: ruleNodes(result.rules), message: rulesMessage(result.rules) };
  }
}
