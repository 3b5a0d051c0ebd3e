"""What a turn step is: one job at fixed points of a session's turn.

A step is built once per turn from the :class:`TurnScope` and overrides only
the hooks it needs (every hook of :class:`TurnStep` does nothing by default):

- ``note(user_text)``: background data for the user's message (joined in step
  order after the message, as one ``memory`` note);
- ``before_request(history, turn)`` / ``after_request(built)``: around each
  request the pipeline builds;
- ``after_model(report, totals)``: after each model step (``report`` is None
  when the server sent no usage);
- ``appended(stored)``: messages the turn just added to the log;
- ``after_turn(status, text)``: once, after a turn that ran to its end.

The order steps run in is declared once, in :mod:`bonsai.session.steps.runner`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from bonsai.agent.context_bridge import ContextBridge
from bonsai.agent.tools.base import Tool
from bonsai.core.context import Assembly, ContextState
from bonsai.domain import StoredMessage
from bonsai.services.providers.types import UsageReport
from bonsai.session.host import Host
from bonsai.settings import Settings

Send = Callable[[str, str], str]  # (question, reflection block) -> the queued turn's id


@dataclass
class TurnScope:
    """What every step of one turn knows."""

    host: Host
    session_id: str
    turn_id: str
    bridge: ContextBridge
    tools: list[Tool]  # what the turn may run (hidden tools left out)
    reflection: str | None  # a retry's reflection block, or None
    send: Send  # queue another turn of this session
    events: list[dict[str, Any]]  # what the turn's record keeps (context events)
    messages: list[StoredMessage] = field(default_factory=list)  # appended by this turn

    @property
    def settings(self) -> Settings:
        return self.bridge.settings

    @property
    def workspace(self) -> str:
        return str(self.bridge.workspace)


@dataclass(frozen=True)
class Built:
    """A request the pipeline has just built."""

    history: list[StoredMessage]
    turn: int
    before: ContextState  # the context state before this request was built
    assembly: Assembly


class TurnStep(Protocol):
    """One job around a turn; every hook is optional (the default does nothing)."""

    def note(self, user_text: str) -> str | None:
        return None

    async def before_request(self, history: list[StoredMessage], turn: int) -> None:
        return None

    def after_request(self, built: Built) -> None:
        return None

    def after_model(self, report: UsageReport | None, totals: dict[str, int]) -> None:
        return None

    def appended(self, stored: list[StoredMessage]) -> None:
        return None

    async def after_turn(self, status: str, text: str) -> None:
        return None


StepFactory = Callable[[TurnScope], TurnStep]
