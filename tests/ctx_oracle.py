"""The `ctx/get` oracle: a view built as one model, as the spliced and the view
process's answers must encode to (tests/session)."""

from __future__ import annotations

from bonsai.daemon.handlers import ctx as handlers
from bonsai.protocol import models as m
from bonsai.protocol.models import CtxGetResult
from bonsai.session.host import Host


def whole_view(host: Host, params: m.CtxGetParams) -> CtxGetResult:
    """The view built as one model: what a spliced answer must encode to."""
    bridge, assembly, _ = handlers._current(host, params.session_id)
    result = CtxGetResult(
        view=params.view, totals=handlers.totals(host, params.session_id, bridge, assembly)
    )
    if params.view == "wire":
        wire = handlers._wire(host, bridge, assembly)
        result.messages, result.tools, result.system = (
            wire["messages"],
            wire["tools"],
            wire["system"],
        )
        return result
    result.nodes = [handlers._ctx_node(row) for row in assembly.ledger]
    if params.view == "turns":
        result.turns = handlers._turns(host, params.session_id)
    return result
