"""The ``bonsai/ctx`` views, computed over a read-only host: the ledger, the wire, the
turns (``answer``) and a node's text (``text``).

Pure reads of the log and of what the host hands over (settings, the server's
facts, the counters, the repository map, the subscribers): the same code runs on
the view worker thread and in the view process (:mod:`bonsai.session.view_process`),
so both give the same bytes. The user's actions on nodes (``current`` then a write)
stay in ``bonsai.daemon.handlers.ctx``, on the loop.
"""

from __future__ import annotations

from typing import Any

from bonsai.agent.context_bridge import ContextBridge, to_chat_request
from bonsai.core.context import Assembly, LedgerRow, assemble, node_text
from bonsai.errors import NotFound
from bonsai.protocol import models as m
from bonsai.services.providers.factory import request_body
from bonsai.services.store.turns import TurnStore
from bonsai.session.base import bridge_for
from bonsai.session.host import Host
from bonsai.session.server_facts import as_sent, ledger_notes, session_notes
from bonsai.session.splice import KeptBytes, encode, encode_value, joined
from bonsai.session.views import Encoded

WIRE_LISTS = ("messages", "tools", "system")  # in CtxGetResult's order


def current(host: Host, session_id: str) -> tuple[ContextBridge, Assembly, int]:
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


def wire(host: Host, bridge: ContextBridge, assembly: Assembly) -> dict[str, Any]:
    request = to_chat_request(assembly, bridge.model, bridge.model_info.max_output)
    request = as_sent(host, bridge.settings.providers, request)  # the text protocol, if chosen
    body = request_body(bridge.settings.providers, request)  # as the provider builds it
    return {
        "system": body.get("system", []),  # Anthropic's; OpenAI's is the first message
        "messages": body["messages"],
        "tools": body.get("tools", []),
    }


def turns(host: Host, session_id: str) -> list[m.CtxTurn]:
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


def ctx_node(row: LedgerRow) -> m.CtxNode:
    return m.CtxNode.model_validate(row.model_dump())


# A ledger row on the wire, encoded; rows are frozen, and most are unchanged from the
# last view (the memos hand back the same row), so each is encoded once. The view
# worker's alone (one thread; the view process has its own).
_node_bytes: KeptBytes[LedgerRow] = KeptBytes(lambda row: encode(ctx_node(row)))


def answer(host: Host, params: m.CtxGetParams) -> Encoded:
    """The view's answer as the bytes encoding the whole ``CtxGetResult`` would be,
    joined from fragments: the head, then each ledger row's kept bytes, or each wire message's."""
    bridge, assembly, _ = current(host, params.session_id)
    head = m.CtxGetResult(
        view=params.view, totals=totals(host, params.session_id, bridge, assembly)
    )
    if params.view == "wire":
        sent = wire(host, bridge, assembly)
        lists = [(name, [encode_value(v) for v in sent[name]]) for name in WIRE_LISTS]
        return Encoded(joined(head, lists))
    nodes = [_node_bytes(row) for row in assembly.ledger]
    if params.view == "turns":
        rows = [encode(turn) for turn in turns(host, params.session_id)]
        return Encoded(joined(head, [("nodes", nodes), ("turns", rows)]))
    return Encoded(joined(head, [("nodes", nodes)]))


def text(host: Host, params: m.CtxNodeParams) -> Encoded:
    """One node's whole text (``bonsai/ctx/text``), encoded."""
    bridge = bridge_for(host, params.session_id)
    history = host.store.messages(params.session_id)
    inp = bridge.input(history, TurnStore(host.db).count(params.session_id) + 1)
    try:
        return Encoded.of(m.CtxTextResult(text=node_text(inp, params.node_id)))
    except KeyError:
        raise NotFound(f"no ledger node {params.node_id!r}") from None
