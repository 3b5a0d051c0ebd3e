"""bonsai/ctx/*: the ledger, the wire, the turns, and the user's actions on nodes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal, get_args

from bonsai.agent.context_bridge import ContextBridge, to_chat_request
from bonsai.core.context import Assembly, LedgerRow, apply_action, assemble, node_text
from bonsai.daemon.rpc import Ctx, handles
from bonsai.errors import InvalidParams, NotFound
from bonsai.protocol import models as m
from bonsai.services.providers.factory import request_body
from bonsai.services.store.turns import TurnStore
from bonsai.session.base import bridge_for, notify_ctx
from bonsai.session.compaction import compact_session
from bonsai.session.host import Host
from bonsai.session.server_facts import as_sent, ensure_facts, ledger_notes, session_notes
from bonsai.session.splice import KeptBytes, encode, encode_value, joined
from bonsai.session.views import Encoded

Action = Literal["pin", "unpin", "drop", "stub", "restore"]


def _current(host: Host, session_id: str) -> tuple[ContextBridge, Assembly, int]:
    bridge = bridge_for(host, session_id)  # model facts: learnt by ensure_facts
    turn = TurnStore(host.db).count(session_id) + 1
    history = host.store.messages(session_id)
    assembly = assemble(bridge.input(history, turn))
    return bridge, assembly, turn


def totals(host: Host, session_id: str, bridge: ContextBridge, assembly: Assembly) -> m.CtxTotals:
    last = host.store.get_state(session_id, "last_usage", {}) or {}
    snapshot = bridge.counter.calibration()
    t = assembly.totals
    # window and reserve as the model states them; usable and used in estimate units
    # (the usable window divided by the calibration factor when the provider bills more)
    return m.CtxTotals(
        window=bridge.model_info.context_window,
        usable=t.usable,
        used=t.used,
        percent=round(t.percent, 2),
        reserve=bridge.reserve(),
        billed_input=int(last.get("input", 0)),
        cached_input=int(last.get("cached", 0)),
        estimated_input=int(last.get("estimated", 0)),
        confidence=t.confidence,
        calibration_factor=snapshot.factor if snapshot else 1.0,
        window_source=bridge.window.window_source if bridge.window else "",
        window_notes=ledger_notes(bridge.window, session_notes(host, session_id)),
        billed_reported=bool(last.get("reported", True)),
    )


def _wire(host: Host, bridge: ContextBridge, assembly: Assembly) -> dict[str, Any]:
    request = to_chat_request(assembly, bridge.model, bridge.model_info.max_output)
    request = as_sent(host, bridge.settings.providers, request)  # the text protocol, if chosen
    body = request_body(bridge.settings.providers, request)  # as the provider builds it
    return {
        "system": body.get("system", []),  # Anthropic's; OpenAI's is the first message
        "messages": body["messages"],
        "tools": body.get("tools", []),
    }


def _turns(host: Host, session_id: str) -> list[m.CtxTurn]:
    out = []
    for row in TurnStore(host.db).list(session_id):
        usage = row.usage or {}
        events = [m.CtxEvent.model_validate(e) for e in row.events if isinstance(e, dict)]
        out.append(
            m.CtxTurn(
                turn=row.n,
                input_tokens=int(usage.get("input", 0)),
                output_tokens=int(usage.get("output", 0)),
                cached_tokens=int(usage.get("cached", 0)),
                estimated_tokens=int(usage.get("estimated", 0)),
                events=events,
            )
        )
    return out


def _ctx_node(row: LedgerRow) -> m.CtxNode:
    return m.CtxNode.model_validate(row.model_dump())


# A ledger row on the wire, encoded; rows are frozen, and most are unchanged from the
# last view (the memos hand back the same row), so each is encoded once. The view
# worker's alone (one thread).
_node_bytes: KeptBytes[LedgerRow] = KeptBytes(lambda row: encode(_ctx_node(row)))


def _node(assembly: Assembly, node_id: str) -> m.CtxNode:
    for row in assembly.ledger:
        if row.id == node_id:
            return m.CtxNode.model_validate(row.model_dump())
    raise NotFound(f"no ledger node {node_id!r}")


@handles("bonsai/ctx/get", read_only=True)
async def get(ctx: Ctx, params: m.CtxGetParams) -> Encoded:
    """The view, encoded on the worker; asked again while nothing moved, the same bytes."""
    await ensure_facts(ctx.daemon, params.session_id)  # on the loop: it may ask the server
    key = f"ctx/get:{params.model_dump_json()}"
    view = ctx.daemon.views
    return await view.run(ctx.daemon, params.session_id, lambda h: _answer(h, params), key)


def _answer(host: Host, params: m.CtxGetParams) -> Encoded:
    """The view's answer as the bytes encoding the whole ``CtxGetResult`` would be,
    joined from fragments: the head, then each ledger row's kept bytes, or each wire message's."""
    bridge, assembly, _ = _current(host, params.session_id)
    head = m.CtxGetResult(
        view=params.view, totals=totals(host, params.session_id, bridge, assembly)
    )
    if params.view == "wire":
        wire = _wire(host, bridge, assembly)
        lists = [(name, [encode_value(v) for v in wire[name]]) for name in WIRE_LISTS]
        return Encoded(joined(head, lists))
    nodes = [_node_bytes(row) for row in assembly.ledger]
    if params.view == "turns":
        turns = [encode(turn) for turn in _turns(host, params.session_id)]
        return Encoded(joined(head, [("nodes", nodes), ("turns", turns)]))
    return Encoded(joined(head, [("nodes", nodes)]))


WIRE_LISTS = ("messages", "tools", "system")  # in CtxGetResult's order


@handles("bonsai/ctx/text", read_only=True)
async def text(ctx: Ctx, params: m.CtxNodeParams) -> m.CtxTextResult:
    return await ctx.daemon.views.run(ctx.daemon, params.session_id, lambda h: _text(h, params))


def _text(host: Host, params: m.CtxNodeParams) -> m.CtxTextResult:
    bridge = bridge_for(host, params.session_id)
    history = host.store.messages(params.session_id)
    inp = bridge.input(history, TurnStore(host.db).count(params.session_id) + 1)
    try:
        return m.CtxTextResult(text=node_text(inp, params.node_id))
    except KeyError:
        raise NotFound(f"no ledger node {params.node_id!r}") from None


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
