"""What the conversation tree does around one turn: where its question attaches
(``tree.attach = topic``), the reflection data block of a retry, and the retry
offer when the turn failed (``tree.auto_reflect``)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from bonsai.agent.tools.base import Tool
from bonsai.domain import StoredMessage
from bonsai.services.store.tree import load_tree
from bonsai.session.attach import apply_on_arrival
from bonsai.session.grading import offer_after_turn, start_retry, take
from bonsai.session.host import Host
from bonsai.session.tree_events import tree_changed
from bonsai.settings import Settings

log = logging.getLogger("bonsai.tree")
Note = Callable[[str], str | None]
Send = Callable[[str, str], str]  # (question, reflection block) -> turn id


def asks_approval(settings: Settings, tools: list[Tool]) -> bool:
    """Could a turn run a tool that needs the user's approval?"""
    policy = settings.tools.policy
    return any(policy.get(t.name, "ask" if t.needs_approval else "allow") == "ask" for t in tools)


class TurnWatch:
    def __init__(
        self, daemon: Host, session_id: str, settings: Settings, tools: list[Tool]
    ) -> None:
        self.daemon, self.session_id, self.settings = daemon, session_id, settings
        self.tools = tools
        self.messages: list[StoredMessage] = []
        self.user_placed = False  # a pending fork: the user chose where the question goes
        if settings.tree.attach == "topic":
            history = daemon.store.messages(session_id)
            self.user_placed = load_tree(daemon.db, session_id, history).fork is not None

    def appended(self, stored: list[StoredMessage]) -> None:
        first = not self.messages
        self.messages.extend(stored)
        if first and stored and not self.user_placed and self.settings.tree.attach == "topic":
            try:
                self._attach(stored[0])
            except Exception:  # the rule must never break a turn
                log.exception("attaching the question failed; it stays at the active leaf")

    def _attach(self, question: StoredMessage) -> None:
        daemon, sid = self.daemon, self.session_id
        tree = load_tree(daemon.db, sid, daemon.store.messages(sid))
        if apply_on_arrival(daemon, sid, self.settings, tree, question) is not None:
            tree_changed(daemon, sid, "attach")

    @staticmethod
    def background(note: Note, reflection: str | None) -> Note:
        """The turn's background data, with a retry's reflection block after it."""
        if reflection is None:
            return note

        def with_reflection(user_text: str) -> str | None:
            return "\n\n".join(p for p in (note(user_text), reflection) if p)

        return with_reflection

    async def finish(self, status: str, text: str, *, retried: bool, send: Send) -> None:
        """After the turn: offer a retry when it failed; retry at once only when no
        tool needs approval and this turn was not itself a retry."""
        if status not in ("done", "stopped"):
            return
        auto = not retried and not asks_approval(self.settings, self.tools)
        try:
            offer = await offer_after_turn(
                self.daemon, self.session_id, self.settings, self.messages, text, auto_retry=auto
            )
            if offer is not None and auto:
                take(self.daemon, self.session_id, offer.offer_id)
                start_retry(self.daemon, self.session_id, offer, send)
        except Exception:
            log.exception("reflection after turn failed; the turn's result stands")
