"""Where the turn's question attaches in the tree (``tree.attach = topic``).

Applied to the first message the turn appends, unless the user already chose
the place (a pending fork when the turn began)."""

from __future__ import annotations

import logging

from bonsai.domain import StoredMessage
from bonsai.services.store.tree import load_tree
from bonsai.session.attach import apply_on_arrival
from bonsai.session.steps.base import TurnScope, TurnStep
from bonsai.session.tree_events import tree_changed

log = logging.getLogger("bonsai.tree")


class QuestionAttach(TurnStep):
    def __init__(self, scope: TurnScope) -> None:
        self.scope = scope
        self.pending = scope.settings.tree.attach == "topic" and not self._user_placed()

    def _user_placed(self) -> bool:
        host, sid = self.scope.host, self.scope.session_id
        return load_tree(host.db, sid, host.store.messages(sid)).fork is not None

    def appended(self, stored: list[StoredMessage]) -> None:
        if not self.pending or not stored:
            return
        self.pending = False
        try:
            self._attach(stored[0])
        except Exception:  # the rule must never break a turn
            log.exception("attaching the question failed; it stays at the active leaf")

    def _attach(self, question: StoredMessage) -> None:
        host, sid = self.scope.host, self.scope.session_id
        tree = load_tree(host.db, sid, host.store.messages(sid))
        if apply_on_arrival(host, sid, self.scope.settings, tree, question) is not None:
            tree_changed(host, sid, "attach")
