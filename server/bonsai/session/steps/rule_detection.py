"""Rules the user states in this message ("always …", "never …") are recorded."""

from __future__ import annotations

from bonsai.session.rules import detect_in_user_message
from bonsai.session.steps.base import TurnScope, TurnStep


class RuleDetection(TurnStep):
    """Runs with the background data (the user's message is in the log by then);
    adds no text of its own. Never fails the turn."""

    def __init__(self, scope: TurnScope) -> None:
        self.scope = scope

    def note(self, user_text: str) -> str | None:
        scope = self.scope
        newest = scope.host.store.latest(scope.session_id)
        detect_in_user_message(scope.host, scope.workspace, newest)
        return None
