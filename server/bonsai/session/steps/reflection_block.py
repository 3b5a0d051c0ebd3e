"""A retry's reflection block goes with the question, after the other background data."""

from __future__ import annotations

from bonsai.session.steps.base import TurnScope, TurnStep


class ReflectionBlock(TurnStep):
    def __init__(self, scope: TurnScope) -> None:
        self.scope = scope

    def note(self, user_text: str) -> str | None:
        return self.scope.reflection
