"""After a failed turn (``tree.auto_reflect``): grade it and offer a retry.

The daemon retries at once only when no tool of the turn needs the user's
approval and the turn was not itself a retry."""

from __future__ import annotations

import logging

from bonsai.agent.tools.base import Tool
from bonsai.session.grading import offer_after_turn, start_retry, take
from bonsai.session.steps.base import TurnScope, TurnStep
from bonsai.settings import Settings

log = logging.getLogger("bonsai.tree")


def asks_approval(settings: Settings, tools: list[Tool]) -> bool:
    """Could a turn run a tool that needs the user's approval?"""
    policy = settings.tools.policy
    return any(policy.get(t.name, "ask" if t.needs_approval else "allow") == "ask" for t in tools)


class RetryOffer(TurnStep):
    def __init__(self, scope: TurnScope) -> None:
        self.scope = scope

    async def after_turn(self, status: str, text: str) -> None:
        if status not in ("done", "stopped"):
            return
        scope = self.scope
        retried = scope.reflection is not None
        auto = not retried and not asks_approval(scope.settings, scope.tools)
        host, sid = scope.host, scope.session_id
        try:
            offer = await offer_after_turn(
                host, sid, scope.settings, scope.messages, text, auto_retry=auto
            )
            if offer is not None and auto:
                take(host, sid, offer.offer_id)
                start_retry(host, sid, offer, scope.send)
        except Exception:
            log.exception("reflection after turn failed; the turn's result stands")
