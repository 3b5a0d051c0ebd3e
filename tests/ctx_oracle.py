"""The `ctx/get` oracle: a view built as one model, as the spliced and the view
process's answers must encode to (tests/session)."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable

from bonsai.daemon.handlers import ctx as handlers
from bonsai.daemon.rpc import Ctx
from bonsai.daemon.state import Daemon
from bonsai.domain import Message
from bonsai.protocol import models as m
from bonsai.protocol.models import CtxGetResult
from bonsai.session.host import Host

# what a random session says: non-ASCII, escapes JSON must write, a long word
WORDS = ["alpha", "déjà", "日本", "tab\there", 'quote"d', "line\nbreak", "\u2028", "x" * 300]


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


def random_text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 40)))


async def random_step(
    daemon: Daemon,
    ctx: Ctx,
    sid: str,
    rng: random.Random,
    step: int,
    ledger: Callable[[], Awaitable[bytes]],
) -> str | None:
    """One step of a random session: a message appended (the first four steps and
    half the others), or a message node pinned, unpinned, dropped, stubbed or
    restored, with its new state asserted to show at once in ``ledger()`` (the
    ledger view's body, as the test under way answers it). The state shown, or
    None when a message was appended or the action does not apply."""
    if step < 4 or rng.random() < 0.5:
        role = "user" if rng.random() < 0.5 else "assistant"
        daemon.store.append(sid, Message(role=role, content=random_text(rng)))
        return None
    listed = CtxGetResult.model_validate_json(await ledger())
    ids = [n.id for n in listed.nodes or [] if n.section == "messages"]
    action = rng.choice(["pin", "unpin", "drop", "stub", "restore"])
    node = rng.choice(ids)
    try:
        done = await handlers._act(ctx, m.CtxNodeParams(session_id=sid, node_id=node), action)
    except Exception as error:  # an action that does not apply to this node
        assert type(error).__name__ in {"InvalidParams", "NotFound"}
        return None
    after = CtxGetResult.model_validate_json(await ledger())
    shown = next(n for n in after.nodes or [] if n.id == node)
    assert shown.state == done.node.state, "the node's new state shows at once"
    return shown.state
