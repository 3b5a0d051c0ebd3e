"""Background summarization (opt-in, Monad's mode) for a session.

Crossing ``context.soft_fraction`` starts the fast model on the span a fold
would take now, off the critical path; the result is kept in the context state
with the last seq it covers. A turn at the compaction trigger waits for a
running summary. When the fold reaches further than the summary covers, the
pipeline extends it before use: never applied stale.
"""

from __future__ import annotations

import asyncio
import logging

from bonsai.agent.context_bridge import ContextBridge
from bonsai.core.context import Assembly, BackgroundSummary, plan_compaction
from bonsai.core.context.background import background_action
from bonsai.core.context.presets import effective_context
from bonsai.domain import StoredMessage
from bonsai.services.providers.types import ProviderError
from bonsai.session.fast_model import fast_summary
from bonsai.session.host import Host
from bonsai.session.steps.base import Built, TurnScope, TurnStep

log = logging.getLogger("bonsai.background")


def _tasks(daemon: Host) -> dict[str, asyncio.Task[None]]:
    return daemon.hub.background


async def wait_if_due(daemon: Host, session_id: str, bridge: ContextBridge) -> None:
    """At the hard fraction, a running background summary is awaited first."""
    task = _tasks(daemon).get(session_id)
    last = bridge.last
    if task is None or task.done() or last is None:
        return
    context = effective_context(bridge.settings.context)
    action = background_action(
        last.totals.used, last.totals.usable, context, running=True, summary=None
    )
    if action == "wait":
        await asyncio.shield(task)


def maybe_start(
    daemon: Host,
    session_id: str,
    bridge: ContextBridge,
    assembly: Assembly,
    history: list[StoredMessage],
    turn: int,
) -> asyncio.Task[None] | None:
    tasks = _tasks(daemon)
    running = session_id in tasks and not tasks[session_id].done()
    context = effective_context(bridge.settings.context)
    action = background_action(
        assembly.totals.used,
        assembly.totals.usable,
        context,
        running=running,
        summary=assembly.state.background,
    )
    if action != "start":
        return None
    inp = bridge.input(history, turn).model_copy(update={"state": assembly.state})
    plan = plan_compaction(inp, target=None, mode="provider")
    if not plan.fold or not plan.prompt:
        return None

    async def run() -> None:
        try:
            text = await fast_summary(bridge.settings, plan.prompt or "")
        except (ProviderError, OSError) as error:
            log.warning("background summary failed (%s); compaction will summarise inline", error)
            return
        summary = BackgroundSummary(text=text, through_seq=plan.through_seq, mode="provider")
        bridge.save_state(bridge.state().model_copy(update={"background": summary}))
        log.info(
            "background summary ready for session %s (through seq %s)", session_id, plan.through_seq
        )

    task = tasks[session_id] = asyncio.ensure_future(run())
    return task


class BackgroundSummaryStep(TurnStep):
    """Before a request: wait for a running summary that is due. After it: start
    one when the request crossed ``context.soft_fraction``."""

    def __init__(self, scope: TurnScope) -> None:
        self.scope = scope

    async def before_request(self, history: list[StoredMessage], turn: int) -> None:
        await wait_if_due(self.scope.host, self.scope.session_id, self.scope.bridge)

    def after_request(self, built: Built) -> None:
        scope = self.scope
        maybe_start(
            scope.host, scope.session_id, scope.bridge, built.assembly, built.history, built.turn
        )
