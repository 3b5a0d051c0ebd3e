"""Wiring a session's agent turns to the daemon: providers, approval, events.

What happens around the turn (the repository map, summaries, memory, the
tree, grading) is the declared list of steps in :mod:`bonsai.session.steps`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from typing import Any

from bonsai.agent.tools.base import ToolContext, ToolServices
from bonsai.agent.turn import Turn, TurnDeps
from bonsai.protocol import models as m
from bonsai.services.providers import make_provider
from bonsai.services.store.turns import ToolOutputStore, TurnStore
from bonsai.session.approvals import ask_approval
from bonsai.session.base import bridge_for, runtime, tools_for
from bonsai.session.episodes import recall_text
from bonsai.session.host import Host
from bonsai.session.memory import memory_lease
from bonsai.session.retry_events import retry_notice
from bonsai.session.server_facts import ensure_facts, turn_stream
from bonsai.session.steps.base import TurnScope
from bonsai.session.steps.runner import TurnSteps
from bonsai.session.tool_guards import ToolGuards

log = logging.getLogger("bonsai.chat")


def send_turn(daemon: Host, session_id: str, text: str, reflection: str | None = None) -> str:
    """Queue a turn; ``reflection`` (a retry's data block) goes with the question."""

    async def go(turn_id: str, queued: str) -> str:
        return await run_turn(daemon, session_id, turn_id, queued, reflection=reflection)

    return runtime(daemon, session_id).send(text, go)


async def run_turn(
    daemon: Host, session_id: str, turn_id: str, text: str, *, reflection: str | None = None
) -> str:
    rt = runtime(daemon, session_id)
    await ensure_facts(daemon, session_id)
    bridge = bridge_for(daemon, session_id)
    settings = bridge.settings
    provider = make_provider(  # the daemon's kept client for these settings: no new connection
        settings.providers,
        env=os.environ,
        on_retry=retry_notice(lambda e: rt.emit(turn_id, e)),
        clients=daemon.hub.clients,
    )
    tools = tools_for(settings)
    events: list[dict[str, Any]] = []

    def send(question: str, block: str) -> str:
        return send_turn(daemon, session_id, question, block)

    scope = TurnScope(daemon, session_id, turn_id, bridge, tools, reflection, send, events)
    steps = TurnSteps(scope)
    guards = ToolGuards(bridge)

    def rename(title: str) -> None:
        daemon.store.rename(session_id, title)
        event = m.SessionEventParams(session_id=session_id, kind="titleChanged", title=title)
        daemon.broadcast(session_id, "bonsai/session/event", event)

    held = contextlib.ExitStack()  # the turn's leases: its memory service stays alive
    tool_ctx = ToolContext(
        workspace=bridge.workspace,
        session_id=session_id,
        turn_id=turn_id,
        settings=settings,
        services=ToolServices(
            rename=rename,
            save_todos=lambda todos: daemon.store.set_state(session_id, "todos", todos),
            tool_outputs=ToolOutputStore(daemon.db),
            recall=recall_text(daemon, session_id),
            memory=held.enter_context(memory_lease(daemon, str(bridge.workspace))),
        ),
    )
    deps = TurnDeps(
        store=daemon.store,
        turns=TurnStore(daemon.db),
        outputs=ToolOutputStore(daemon.db),
        session_id=session_id,
        turn_id=turn_id,
        tools=tools,
        tool_ctx=tool_ctx,
        emit=lambda event: rt.emit(turn_id, event),
        emit_delta=lambda text: rt.emit_delta(turn_id, text),
        approve=lambda tool, args, diff: ask_approval(
            daemon, session_id, turn_id, tool, args, diff, bridge.workspace
        ),
        build_request=steps.build,
        stream=turn_stream(
            daemon,
            session_id,
            settings.providers,
            lambda e: rt.emit(turn_id, e),
            provider.stream,
            getattr(provider, "complete", None),  # whole replies, where streaming tools fails
        ),
        policy=dict(settings.tools.policy),
        on_appended=steps.appended,
        on_usage=steps.after_model,
        events=events,
        guard=guards.guard,
        after_tool=guards.after,
        background=steps.note,
        load_history=bridge.history,
        step_budget_s=settings.providers.step_budget_s,
    )
    try:
        await asyncio.sleep(0)  # the turn's set-up, its start and its end: short slices apart
        status = await Turn(deps).run(text)
        await asyncio.sleep(0)
        await steps.after_turn(status, text)
        return status
    finally:
        held.close()
        with contextlib.suppress(Exception):
            await provider.aclose()
