"""bonsai/reflect/*: take or dismiss a retry offer made after a failed turn."""

from __future__ import annotations

from bonsai.daemon.rpc import Ctx, handles
from bonsai.errors import Conflict
from bonsai.protocol import models as m
from bonsai.session.base import runtime
from bonsai.session.chat import send_turn
from bonsai.session.grading import start_retry, take


@handles("bonsai/reflect/retry", read_only=False)
async def retry(ctx: Ctx, params: m.ReflectOfferParams) -> m.ChatSendResult:
    daemon, sid = ctx.daemon, params.session_id
    daemon.store.get(sid)
    if not await runtime(daemon, sid).settled():
        raise Conflict("a turn is running in this session; wait for it or cancel it first")
    offer = take(daemon, sid, params.offer_id)
    turn_id = start_retry(
        daemon, sid, offer, lambda question, block: send_turn(daemon, sid, question, block)
    )
    return m.ChatSendResult(turn_id=turn_id)


@handles("bonsai/reflect/dismiss", read_only=False)
async def dismiss(ctx: Ctx, params: m.ReflectOfferParams) -> m.Empty:
    ctx.daemon.store.get(params.session_id)
    take(ctx.daemon, params.session_id, params.offer_id)
    return m.Empty()
