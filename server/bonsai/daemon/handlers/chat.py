"""bonsai/chat/*"""

from __future__ import annotations

import os

from bonsai.daemon.rpc import Ctx, handles
from bonsai.protocol import models as m
from bonsai.session import provider_choice
from bonsai.session.base import runtime
from bonsai.session.chat import run_turn


@handles("bonsai/chat/send", read_only=False)
async def send(ctx: Ctx, params: m.ChatSendParams) -> m.ChatSendResult:
    daemon = ctx.daemon
    row = daemon.store.get(params.session_id)
    if params.client is not None:
        provider_choice.remember(daemon, params.session_id, params.client)
    settings = provider_choice.session_settings(daemon, params.session_id, row.workspace)
    provider_choice.check_ready(daemon, settings, os.environ)
    rt = runtime(daemon, params.session_id)

    async def go(turn_id: str, text: str) -> str:
        return await run_turn(daemon, params.session_id, turn_id, text)

    return m.ChatSendResult(turn_id=rt.send(params.text, go))


@handles("bonsai/chat/cancel", read_only=False)
async def cancel(ctx: Ctx, params: m.ChatCancelParams) -> m.ChatCancelResult:
    ctx.daemon.store.get(params.session_id)
    cancelled = runtime(ctx.daemon, params.session_id).cancel(params.turn_id)
    return m.ChatCancelResult(cancelled=cancelled)
