"""bonsai/rules/*: a workspace's standing instructions for the agent."""

from __future__ import annotations

from bonsai.daemon.rpc import Ctx, handles
from bonsai.protocol import models as m
from bonsai.session.rules import (
    announce,
    rule_info,
    rule_infos,
    rule_store,
    scope_workspace,
    user_errors,
)


@handles("bonsai/rules/list", read_only=True)
async def list_(ctx: Ctx, params: m.RulesScope) -> m.RulesListResult:
    workspace = scope_workspace(ctx.daemon, params)
    rules = await ctx.daemon.views.run(ctx.daemon, None, lambda host: rule_infos(host, workspace))
    return m.RulesListResult(workspace=workspace, rules=rules)


@handles("bonsai/rules/add", read_only=False)
async def add(ctx: Ctx, params: m.RulesAddParams) -> m.RuleResult:
    workspace = scope_workspace(ctx.daemon, params)
    with user_errors():
        rule = rule_store(ctx.daemon).add(workspace, params.text, "user")
    announce(ctx.daemon, workspace, "added", ctx.connection)
    return m.RuleResult(rule=rule_info(rule))


@handles("bonsai/rules/edit", read_only=False)
async def edit(ctx: Ctx, params: m.RulesEditParams) -> m.RuleResult:
    with user_errors():
        rule = rule_store(ctx.daemon).edit(params.id, text=params.text, enabled=params.enabled)
    announce(ctx.daemon, rule.workspace, "edited", ctx.connection)
    return m.RuleResult(rule=rule_info(rule))


@handles("bonsai/rules/delete", read_only=False)
async def delete(ctx: Ctx, params: m.RulesIdParams) -> m.Empty:
    with user_errors():
        rule = rule_store(ctx.daemon).delete(params.id)
    announce(ctx.daemon, rule.workspace, "deleted", ctx.connection)
    return m.Empty()
