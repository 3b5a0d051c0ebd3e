"""Every message the turn appends reaches the session's clients (``messageAppended``)."""

from __future__ import annotations

from bonsai.domain import StoredMessage
from bonsai.protocol import models as m
from bonsai.session.convert import wire_message
from bonsai.session.steps.base import TurnScope, TurnStep


class MessageEvents(TurnStep):
    def __init__(self, scope: TurnScope) -> None:
        self.scope = scope

    def appended(self, stored: list[StoredMessage]) -> None:
        sid = self.scope.session_id
        for item in stored:
            event = m.SessionEventParams(
                session_id=sid, kind="messageAppended", message=wire_message(item)
            )
            self.scope.host.broadcast(sid, "bonsai/session/event", event)
