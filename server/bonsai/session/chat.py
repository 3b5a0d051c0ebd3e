"""Wiring a session's agent turns to the daemon: providers, approval, events."""

from __future__ import annotations

import contextlib
import json
import logging
import os
from typing import Any

from bonsai.agent.context_bridge import ContextBridge, auto_inject
from bonsai.agent.tools.base import ToolContext, ToolResult, ToolServices
from bonsai.agent.turn import Turn, TurnDeps
from bonsai.core.context import loop_guard, read_reuse
from bonsai.core.context.presets import effective_context
from bonsai.domain import StoredMessage, ToolCall
from bonsai.protocol import models as m
from bonsai.services.providers import make_provider
from bonsai.services.providers.types import ChatRequest, UsageReport
from bonsai.services.store.turns import ToolOutputStore, TurnStore
from bonsai.services.tokens import Count
from bonsai.session.approvals import ask_approval
from bonsai.session.background import maybe_start, wait_if_due
from bonsai.session.base import bridge_for, notify_ctx, runtime, tools_for
from bonsai.session.compaction import ctx_events
from bonsai.session.convert import wire_message
from bonsai.session.episodes import recall_text
from bonsai.session.handoff import maybe_suggest_handoff
from bonsai.session.host import Host
from bonsai.session.memory import memory_lease, recall_note
from bonsai.session.promotion import maybe_promote
from bonsai.session.reinjection import related_context
from bonsai.session.repomap import map_for
from bonsai.session.retry_events import retry_notice
from bonsai.session.rules import detect_in_user_message
from bonsai.session.server_facts import ensure_facts, turn_stream
from bonsai.session.turn_watch import TurnWatch

log = logging.getLogger("bonsai.chat")


def _observer(daemon: Host, session_id: str, bridge: ContextBridge, events: list[dict[str, Any]]):  # type: ignore[no-untyped-def]
    """Build requests through the pipeline; record what it did; tell clients."""

    async def build(history: list[StoredMessage], turn: int) -> ChatRequest:
        settings = bridge.settings
        if settings.repomap.enabled and not effective_context(settings.context).smol:
            clients = daemon.subscribers(session_id)
            try:
                repomap = await map_for(daemon, str(bridge.workspace), history, clients)
                bridge.repomap_text = repomap.text or None
            except Exception:  # the map is an aid: a broken one must never break a turn
                log.exception("repository map failed; this request goes without it")
                bridge.repomap_text = None
        else:
            bridge.repomap_text = None
        daemon.hub.repomap_text[session_id] = bridge.repomap_text  # the ledger shows it too
        await wait_if_due(daemon, session_id, bridge)
        before = bridge.state()
        request = await bridge.build_request(history, turn)
        assert bridge.last is not None
        maybe_start(daemon, session_id, bridge, bridge.last, history, turn)
        maybe_promote(
            daemon, session_id, str(bridge.workspace), settings, history, before, bridge.last.state
        )
        done = ctx_events(bridge.last.records)
        events.extend(e.model_dump(by_alias=True, exclude_none=True) for e in done)
        notify_ctx(daemon, session_id, bridge.last, done)
        maybe_suggest_handoff(daemon, session_id, settings, bridge.last, history)
        return request

    def usage(report: UsageReport | None, request: ChatRequest, totals: dict[str, int]) -> None:
        estimated = bridge.last.totals.used if bridge.last else 0
        totals["estimated"] = totals.get("estimated", 0) + estimated
        if report is None:  # the server sent no usage: show our estimate, calibrate nothing
            unreported = {"input": 0, "cached": 0, "output": 0, "estimated": estimated}
            daemon.store.set_state(session_id, "last_usage", {**unreported, "reported": False})
            return
        daemon.store.set_state(
            session_id,
            "last_usage",
            {
                "input": report.input_tokens,
                "cached": report.cached_input_tokens,
                "output": report.output_tokens,
                "estimated": estimated,
            },
        )
        if estimated and report.input_tokens:
            bridge.counter.observe_usage(
                Count(tokens=estimated, confidence="low"), report.input_tokens
            )

    return build, usage


def _guards(bridge: ContextBridge):  # type: ignore[no-untyped-def]
    """Loop guards before a tool runs; read reuse after a read returns."""

    def guard(call: ToolCall, history: list[StoredMessage]) -> tuple[str, str]:
        view = bridge.view(history)
        verdict = loop_guard(view.items, call, view.state)
        bridge.save_state(verdict.state)
        return verdict.level, verdict.message

    def after(call: ToolCall, result: ToolResult, history: list[StoredMessage]) -> ToolResult:
        evidence = result.evidence
        if evidence is None or evidence.kind != "read" or result.is_error:
            return result
        explicit = bool(_loads_dict(call.arguments).get("fresh"))
        view = bridge.view(history)
        pointer = read_reuse(
            view.items, evidence, explicit=explicit, state=view.state, text=result.content
        )
        return ToolResult(pointer, evidence) if pointer else result

    return guard, after


def _background(daemon: Host, session_id: str, bridge: ContextBridge):  # type: ignore[no-untyped-def]
    """Background data for a user turn: recalled memory (off in smol mode or when
    memory is disabled) and, with ``retrieval.auto_inject``, related earlier
    history. Rules the user states in this message are detected here too."""
    settings = bridge.settings
    smol = effective_context(settings.context).smol

    def count(text: str) -> int:
        return bridge.counter.count_text(text).tokens

    def note(user_text: str) -> str | None:
        parts = []
        if settings.memory.enabled and not smol:
            try:
                ws = str(bridge.workspace)
                parts.append(recall_note(daemon, session_id, ws, user_text, count))
            except Exception:  # memory must never break a turn
                log.exception("memory recall failed; the turn goes on without it")
        detect_in_user_message(daemon, str(bridge.workspace), daemon.store.latest(session_id))
        if auto_inject(settings):  # related history searches the whole log
            history = daemon.store.messages(session_id)
            parts.append(related_context(daemon, session_id, settings, history, user_text))
        joined = "\n\n".join(p for p in parts if p)
        return joined or None

    return note


def _loads_dict(raw: str) -> dict[str, Any]:
    try:
        value = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


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
    provider = make_provider(
        settings.providers, env=os.environ, on_retry=retry_notice(lambda e: rt.emit(turn_id, e))
    )
    tools = tools_for(settings)
    watch = TurnWatch(daemon, session_id, settings, tools)
    events: list[dict[str, Any]] = []
    build, usage = _observer(daemon, session_id, bridge, events)
    guard, after = _guards(bridge)

    def appended(stored: list[StoredMessage]) -> None:
        watch.appended(stored)
        for item in stored:
            event = m.SessionEventParams(
                session_id=session_id, kind="messageAppended", message=wire_message(item)
            )
            daemon.broadcast(session_id, "bonsai/session/event", event)

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
        approve=lambda tool, args, diff: ask_approval(
            daemon, session_id, turn_id, tool, args, diff, bridge.workspace
        ),
        build_request=build,
        stream=turn_stream(
            daemon,
            session_id,
            settings.providers,
            lambda e: rt.emit(turn_id, e),
            provider.stream,
            getattr(provider, "complete", None),  # whole replies, where streaming tools fails
        ),
        policy=dict(settings.tools.policy),
        on_appended=appended,
        on_usage=usage,
        events=events,
        guard=guard,
        after_tool=after,
        background=watch.background(_background(daemon, session_id, bridge), reflection),
        load_history=bridge.history,
        step_budget_s=settings.providers.step_budget_s,
    )
    try:
        status = await Turn(deps).run(text)
        await watch.finish(
            status,
            text,
            retried=reflection is not None,
            send=lambda question, block: send_turn(daemon, session_id, question, block),
        )
        return status
    finally:
        held.close()
        with contextlib.suppress(Exception):
            await provider.aclose()
