"""bonsai/ctx/*: the ledger, the wire, the turns, and the user's actions on nodes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal, get_args

from bonsai.core.context import Assembly, apply_action, assemble
from bonsai.daemon.rpc import Ctx, Reply, answers_now, handles
from bonsai.daemon.state import settings_read_once
from bonsai.errors import InvalidParams, NotFound
from bonsai.protocol import models as m
from bonsai.session import ctx_views, request_trace
from bonsai.session.base import notify_ctx
from bonsai.session.baseline import has_baseline
from bonsai.session.compaction import compact_session
from bonsai.session.server_facts import ensure_facts, facts_known
from bonsai.session.views import Encoded, Named

Action = Literal["pin", "unpin", "drop", "stub", "restore"]


# the views' parts, under the names the tests and benches know them by
_current, totals, _wire, _turns, _ctx_node = (
    ctx_views.current,
    ctx_views.totals,
    ctx_views.wire,
    ctx_views.turns,
    ctx_views.ctx_node,
)
_answer, WIRE_LISTS = ctx_views.answer, ctx_views.WIRE_LISTS


def _node(assembly: Assembly, node_id: str) -> m.CtxNode:
    for row in assembly.ledger:
        if row.id == node_id:
            return m.CtxNode.model_validate(row.model_dump())
    raise NotFound(f"no ledger node {node_id!r}")


@handles("bonsai/ctx/get", read_only=True)
async def get(ctx: Ctx, params: m.CtxGetParams) -> Encoded:
    """The view, computed in the view process (or on the worker thread), encoded there;
    asked again while nothing moved, the same bytes."""
    request_trace.mark("handler")
    await ensure_facts(ctx.daemon, params.session_id)  # on the loop: it may ask the server
    request_trace.mark("facts")
    view = Named("bonsai/ctx/get", params, ctx_views.answer)
    return await ctx.daemon.views.run(ctx.daemon, params.session_id, view, _key(params))


@answers_now("bonsai/ctx/get")
def get_now(ctx: Ctx, params: m.CtxGetParams, reply: Reply) -> bool:
    """:func:`get` from the read's callback, when it would not wait before its kept-answer
    check (the server's facts known, the baseline taken): the kept answer written at
    once, or a computed one by the view process's pipe callback that reads it. One
    synchronous span: the settings are checked once in it, not at each layer."""
    with settings_read_once():
        return _get_now(ctx, params, reply)


def _get_now(ctx: Ctx, params: m.CtxGetParams, reply: Reply) -> bool:
    daemon, sid = ctx.daemon, params.session_id
    try:
        ready = facts_known(daemon, sid) and has_baseline(daemon, sid)
    except Exception:  # an unknown session: its handler gives the error
        return False
    if not ready:
        return False
    request_trace.mark("handler")
    request_trace.mark("facts")
    view = Named("bonsai/ctx/get", params, ctx_views.answer)
    kept, value = daemon.views.run_now(daemon, sid, view, _key(params), reply.settle)
    if kept:
        reply.send(value)
    return True


def _key(params: m.CtxGetParams) -> str:
    return f"ctx/get:{params.model_dump_json()}"


@handles("bonsai/ctx/text", read_only=True)
async def text(ctx: Ctx, params: m.CtxNodeParams) -> Encoded:
    view = Named("bonsai/ctx/text", params, ctx_views.text)
    return await ctx.daemon.views.run(ctx.daemon, params.session_id, view)


async def _act(ctx: Ctx, params: m.CtxNodeParams, action: Action) -> m.CtxNodeResult:
    daemon, sid = ctx.daemon, params.session_id
    bridge, _, turn = _current(daemon, sid)
    inp = bridge.input(daemon.store.messages(sid), turn)
    try:
        state, record = apply_action(inp.state, inp.items, params.node_id, action, turn)
    except KeyError as error:
        raise NotFound(str(error).strip("'\"")) from None
    except ValueError as error:
        raise InvalidParams(str(error)) from None
    bridge.save_state(state)
    daemon.store.record_action(sid, params.node_id, action, record.detail)
    assembly = assemble(bridge.input(daemon.store.messages(sid), turn))
    notify_ctx(daemon, sid, assembly)
    return m.CtxNodeResult(node=_node(assembly, params.node_id))


def _action_handler(action: Action) -> Callable[[Ctx, m.CtxNodeParams], Awaitable[m.CtxNodeResult]]:
    async def handler(ctx: Ctx, params: m.CtxNodeParams) -> m.CtxNodeResult:
        return await _act(ctx, params, action)

    return handler


for _action in get_args(Action):  # bonsai/ctx/pin, unpin, drop, stub, restore
    handles(f"bonsai/ctx/{_action}", read_only=False)(_action_handler(_action))


@handles("bonsai/ctx/compact", read_only=False)
async def compact(ctx: Ctx, params: m.CtxCompactParams) -> m.CtxCompactResult:
    return await compact_session(ctx.daemon, params)
