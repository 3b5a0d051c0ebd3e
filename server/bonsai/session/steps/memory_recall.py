"""Background data: recalled memory for the user's message (off in smol mode or
when memory is disabled; each entry once per conversation)."""

from __future__ import annotations

import logging

from bonsai.core.context.presets import effective_context
from bonsai.session.memory import recall_note
from bonsai.session.steps.base import TurnScope, TurnStep

log = logging.getLogger("bonsai.chat")


class MemoryRecall(TurnStep):
    def __init__(self, scope: TurnScope) -> None:
        self.scope = scope

    def note(self, user_text: str) -> str | None:
        scope = self.scope
        settings = scope.settings
        if not settings.memory.enabled or effective_context(settings.context).smol:
            return None
        try:
            host, sid = scope.host, scope.session_id
            return recall_note(host, sid, scope.workspace, user_text, self._count)
        except Exception:  # memory must never break a turn
            log.exception("memory recall failed; the turn goes on without it")
            return None

    def _count(self, text: str) -> int:
        return self.scope.bridge.counter.count_text(text).tokens
