"""Memory promotion: lift durable facts out of a span just before it is folded away.

Runs off the critical path after an assembly folded new messages into the
summary (the last chance to read their original text). ``suggest`` sends
``bonsai/memory/suggestion`` to the session's clients to confirm; ``auto``
writes through the same validation as ``memory_write``. Best effort: a failure
is logged and never affects the turn.
"""

from __future__ import annotations

import asyncio
import logging

from bonsai.core.context import ContextState
from bonsai.domain import StoredMessage
from bonsai.protocol import models as m
from bonsai.services.memory.promotion import promote
from bonsai.session.fast_model import fast_summary
from bonsai.session.host import Host
from bonsai.session.memory import memory_lease
from bonsai.session.steps.base import Built, TurnScope, TurnStep
from bonsai.settings import Settings

log = logging.getLogger("bonsai.promotion")


def newly_folded(before: ContextState, after: ContextState) -> list[str]:
    old = set(before.summary.folded) if before.summary else set()
    return [i for i in (after.summary.folded if after.summary else []) if i not in old]


def span_text(history: list[StoredMessage], ids: list[str]) -> str:
    wanted = set(ids)
    return "\n\n".join(
        f"{s.message.role}: {s.message.content}" for s in history if s.message_id in wanted
    )


def maybe_promote(
    daemon: Host,
    session_id: str,
    workspace: str,
    settings: Settings,
    history: list[StoredMessage],
    before: ContextState,
    after: ContextState,
) -> asyncio.Task[None] | None:
    mode = settings.memory.promotion
    if mode == "off" or not settings.memory.enabled:
        return None
    ids = newly_folded(before, after)
    if not ids:
        return None
    text = span_text(history, ids)

    async def run() -> None:
        try:
            with memory_lease(daemon, workspace) as service:
                result = await promote(text, lambda p: fast_summary(settings, p), service, mode)
        except Exception:
            log.exception("memory promotion failed; the session is unaffected")
            return
        if mode == "suggest" and result.suggestions:
            facts = [s.fact for s in result.suggestions]
            note = m.MemorySuggestionParams(session_id=session_id, facts=facts)
            daemon.broadcast(session_id, "bonsai/memory/suggestion", note)
        if result.written:
            log.info("promoted to memory: %s", ", ".join(result.written))

    return asyncio.ensure_future(run())


class MemoryPromotion(TurnStep):
    """After a request that folded new messages: lift durable facts from them."""

    def __init__(self, scope: TurnScope) -> None:
        self.scope = scope

    def after_request(self, built: Built) -> None:
        scope = self.scope
        maybe_promote(
            scope.host,
            scope.session_id,
            scope.workspace,
            scope.settings,
            built.history,
            built.before,
            built.assembly.state,
        )
