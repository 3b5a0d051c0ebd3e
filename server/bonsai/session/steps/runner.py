"""The turn's steps, declared once in the order they run, and what runs them.

:class:`TurnSteps` is what ``run_turn`` hands the agent's turn: the request
builder, the background note, the usage and append hooks, and the end of turn,
each one a pass over :data:`TURN_STEPS`.
"""

from __future__ import annotations

import asyncio

from bonsai.domain import StoredMessage
from bonsai.services.providers.types import ChatRequest, UsageReport
from bonsai.session.steps.background_summary import BackgroundSummaryStep
from bonsai.session.steps.base import Built, StepFactory, TurnScope, TurnStep
from bonsai.session.steps.ctx_notice import CtxNotice
from bonsai.session.steps.handoff import Handoff
from bonsai.session.steps.memory_promotion import MemoryPromotion
from bonsai.session.steps.memory_recall import MemoryRecall
from bonsai.session.steps.message_events import MessageEvents
from bonsai.session.steps.question_attach import QuestionAttach
from bonsai.session.steps.reflection_block import ReflectionBlock
from bonsai.session.steps.reinjection import Reinjection
from bonsai.session.steps.repository_map import RepositoryMap
from bonsai.session.steps.retry_offer import RetryOffer
from bonsai.session.steps.rule_detection import RuleDetection
from bonsai.session.steps.usage_record import UsageRecord

TURN_STEPS: tuple[StepFactory, ...] = (
    RepositoryMap,  # before each request: the map it shows
    BackgroundSummaryStep,  # before: wait for a due summary; after: start one
    MemoryPromotion,  # after a request that folded messages
    CtxNotice,  # after each request: context events, bonsai/ctx/changed
    Handoff,  # after a request past the handoff fraction
    MemoryRecall,  # background data, in this order: recalled memory,
    RuleDetection,  # (rules stated in the message: no text)
    Reinjection,  # related earlier history,
    ReflectionBlock,  # a retry's reflection
    QuestionAttach,  # the first appended message: where it attaches
    MessageEvents,  # every appended message: messageAppended
    UsageRecord,  # after each model step
    RetryOffer,  # after the turn: grade it, offer a retry
)


class TurnSteps:
    """Every step of one turn, each hook run over them in the declared order."""

    def __init__(self, scope: TurnScope, factories: tuple[StepFactory, ...] = TURN_STEPS) -> None:
        self.scope = scope
        self.steps: list[TurnStep] = [make(scope) for make in factories]

    def note(self, user_text: str) -> str | None:
        parts = [step.note(user_text) for step in self.steps]
        return "\n\n".join(p for p in parts if p) or None

    async def build(self, history: list[StoredMessage], turn: int) -> ChatRequest:
        """Build one request through the pipeline, with every step around it."""
        bridge = self.scope.bridge
        for step in self.steps:
            await step.before_request(history, turn)
        before = bridge.state()
        request = await bridge.build_request(history, turn)
        assert bridge.last is not None
        built = Built(history=history, turn=turn, before=before, assembly=bridge.last)
        await asyncio.sleep(0)  # the loop's others run between the build and its events
        for step in self.steps:
            step.after_request(built)
        return request

    def after_model(
        self, report: UsageReport | None, request: ChatRequest, totals: dict[str, int]
    ) -> None:
        for step in self.steps:
            step.after_model(report, totals)

    def appended(self, stored: list[StoredMessage]) -> None:
        self.scope.messages.extend(stored)
        for step in self.steps:
            step.appended(stored)

    async def after_turn(self, status: str, text: str) -> None:
        for step in self.steps:
            await step.after_turn(status, text)
