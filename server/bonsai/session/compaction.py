"""Running a compaction for a session: plan, optional fast-model summary, apply."""

from __future__ import annotations

import logging

from bonsai.core.context import Record, apply_compaction, plan_compaction
from bonsai.errors import InvalidParams
from bonsai.protocol import models as m
from bonsai.services.providers.types import ProviderError
from bonsai.services.store.turns import TurnStore
from bonsai.session.base import bridge_for, notify_ctx
from bonsai.session.fast_model import fast_summary
from bonsai.session.host import Host

log = logging.getLogger("bonsai.compaction")


def ctx_events(records: list[Record], note: str | None = None) -> list[m.CtxEvent]:
    events = [
        m.CtxEvent(
            kind=r.kind,
            detail=r.detail,
            tokens_before=r.tokens_before,
            tokens_after=r.tokens_after,
            prefix_hash_before=r.prefix_hash_before,
            prefix_hash_after=r.prefix_hash_after,
        )
        for r in records
    ]
    if note:
        events.append(m.CtxEvent(kind="summary", detail=note))
    return events


async def compact_session(daemon: Host, params: m.CtxCompactParams) -> m.CtxCompactResult:
    sid = params.session_id
    bridge = bridge_for(daemon, sid)
    turns = TurnStore(daemon.db)
    inp = bridge.input(daemon.store.messages(sid), turns.count(sid) + 1)
    mode = "deterministic" if params.mode == "fallback" else params.mode
    try:
        plan = plan_compaction(inp, target=params.target, mode=mode)
    except ValueError as error:
        raise InvalidParams(str(error)) from None
    if params.preview:
        return m.CtxCompactResult(
            preview=True,
            before=plan.before,
            after=plan.estimated_after,
            events=ctx_events(plan.records),
        )
    summary, note = None, None
    if plan.fold and mode == "provider" and plan.prompt:
        try:
            summary = await fast_summary(bridge.settings, plan.prompt)
        except (ProviderError, OSError) as error:
            note = f"fast-model summary failed ({error}); used the deterministic summary"
            log.warning(note)
    assembly = apply_compaction(inp, plan, summary)
    bridge.save_state(assembly.state)
    notify_ctx(daemon, sid, assembly)
    events = ctx_events(assembly.records, note)
    turns.add_events(sid, [e.model_dump(by_alias=True, exclude_none=True) for e in events])
    return m.CtxCompactResult(
        preview=False, before=plan.before, after=assembly.totals.used, events=events
    )
