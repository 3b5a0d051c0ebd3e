"""Wiring a session's agent turns to the daemon: providers, approval, events."""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bonsai.agent.context_bridge import ContextBridge, auto_inject
from bonsai.agent.runtime import SessionRuntime
from bonsai.agent.tools import recall
from bonsai.agent.tools.base import Tool, ToolContext, ToolResult
from bonsai.agent.tools.memory_write import memory_write_tool
from bonsai.agent.tools.registry import builtin_tools, session_tools, validate_hidden
from bonsai.agent.turn import Turn, TurnDeps
from bonsai.core.context import Assembly, AssemblyMemo, loop_guard, read_reuse
from bonsai.core.context.presets import effective_context
from bonsai.domain import StoredMessage, ToolCall
from bonsai.protocol import models as m
from bonsai.services.providers import make_provider, resolve_api_key
from bonsai.services.providers.types import ChatRequest, ProviderError, UsageReport
from bonsai.services.store.turns import ToolOutputStore, TurnStore
from bonsai.services.tokens import Count, TokenCounter, estimator_for
from bonsai.session.approvals import ask_approval
from bonsai.session.background import maybe_start, wait_if_due
from bonsai.session.compaction import ctx_events, fast_summary
from bonsai.session.convert import wire_message
from bonsai.session.episodes import recall_text
from bonsai.session.handoff import maybe_suggest_handoff
from bonsai.session.memory import memory_lease, recall_note
from bonsai.session.promotion import maybe_promote
from bonsai.session.provider_choice import session_settings
from bonsai.session.reinjection import related_context
from bonsai.session.repomap import map_for
from bonsai.session.retry_events import retry_notice
from bonsai.session.rules import detect_in_user_message
from bonsai.session.server_facts import ensure_facts, turn_stream, window_for
from bonsai.session.turn_watch import TurnWatch
from bonsai.settings import ProviderSettings, Settings

if TYPE_CHECKING:
    from bonsai.daemon.state import Daemon

log = logging.getLogger("bonsai.chat")


def runtime(daemon: Daemon, session_id: str) -> SessionRuntime:
    runtimes: dict[str, SessionRuntime] = daemon.services.setdefault("runtimes", {})
    existing = runtimes.get(session_id)
    if existing is None:

        def publish(event: dict[str, Any]) -> None:
            daemon.broadcast(
                session_id, "bonsai/chat/event", m.ChatEventParams.model_validate(event)
            )

        existing = runtimes[session_id] = SessionRuntime(session_id, publish)
    return existing


def counter_for(daemon: Daemon, providers: ProviderSettings, info: Any) -> TokenCounter:
    """One counter per model (its count cache and calibration live across sessions).
    Anthropic models count through the count_tokens API when a key is configured."""
    counters: dict[str, TokenCounter] = daemon.services.setdefault("counters", {})
    model = providers.model
    if model not in counters:
        api = None
        if info.family == "anthropic" and resolve_api_key(providers, os.environ):
            provider = make_provider(providers, env=os.environ)
            api = getattr(provider, "count_tokens_body", None)
        counters[model] = estimator_for(
            info,
            cache_dir=daemon.home / "cache" / "tiktoken",
            tokenizer_path=None,
            model=model,
            count_tokens_api=api,
        )
    return counters[model]


def tools_for(settings: Settings, *, include_hidden: bool = False) -> list[Tool]:
    """The session's tools: recall only with episodes on (off: byte-identical list).

    The pipeline gets the list with hidden tools still in it (it hides them and
    shows that in the ledger); execution gets the list without them."""
    extra = [recall.TOOL] if settings.episodes.enabled else []
    if settings.memory.enabled:
        extra.append(memory_write_tool())
    hidden = [] if include_hidden else settings.tools.hidden
    validate_hidden(settings.tools.hidden, [*builtin_tools(), *extra])
    return session_tools(hidden, effective_context(settings.context).smol, extra)


def _summarizer(settings: Settings) -> Callable[[str], Awaitable[str | None]] | None:
    """The fast model for tier-2 summaries; None when summaries are deterministic."""
    context = effective_context(settings.context)
    if context.summary_mode != "provider" or context.smol:
        return None

    async def summarize(prompt: str) -> str | None:
        try:
            return await fast_summary(settings, prompt)
        except (ProviderError, OSError) as error:
            log.warning("fast-model summary failed (%s); using the deterministic one", error)
            return None

    return summarize


def bridge_for(daemon: Daemon, session_id: str) -> ContextBridge:
    row = daemon.store.get(session_id)
    settings = session_settings(daemon, session_id, row.workspace)
    providers = settings.providers
    window = window_for(daemon, providers)  # registry row + what the server said
    tools = tools_for(settings, include_hidden=True)
    peers = [f"client {c.id} ({c.kind})" for c in daemon.subscribers(session_id)]
    memos: dict[str, AssemblyMemo] = daemon.services.setdefault("memos", {})
    return ContextBridge(
        memo=memos.setdefault(session_id, AssemblyMemo()),
        summarize=_summarizer(settings),
        store=daemon.store,
        session_id=session_id,
        workspace=Path(row.workspace),
        settings=settings,
        model=providers.model,
        model_info=window.info,
        window=window,
        counter=counter_for(daemon, providers, window.info),
        tools=[t.spec() for t in tools],
        repomap_text=None,
        peers=peers,
    )


def notify_ctx(
    daemon: Daemon, session_id: str, assembly: Assembly, events: list[m.CtxEvent] | None = None
) -> None:
    totals = assembly.totals
    workspace = daemon.store.get(session_id).workspace
    daemon.services.setdefault("last_assembly", {})[workspace] = {
        "sessionId": session_id,
        "used": totals.used,
        "usable": totals.usable,
        "percent": round(totals.percent, 2),
        "systemParts": [part.id for part in assembly.system],
        "messages": len(assembly.messages),
        "tools": [tool["name"] for tool in assembly.tools],
        "prefixHash": assembly.prefix_hash,
    }
    params = m.CtxChangedParams(
        session_id=session_id,
        percent=round(totals.percent, 2),
        used=totals.used,
        usable=totals.usable,
        events=events or None,
    )
    daemon.broadcast(session_id, "bonsai/ctx/changed", params)


def _observer(daemon: Daemon, session_id: str, bridge: ContextBridge, events: list[dict[str, Any]]):  # type: ignore[no-untyped-def]
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


def _background(daemon: Daemon, session_id: str, bridge: ContextBridge):  # type: ignore[no-untyped-def]
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


def send_turn(daemon: Daemon, session_id: str, text: str, reflection: str | None = None) -> str:
    """Queue a turn; ``reflection`` (a retry's data block) goes with the question."""

    async def go(turn_id: str, queued: str) -> str:
        return await run_turn(daemon, session_id, turn_id, queued, reflection=reflection)

    return runtime(daemon, session_id).send(text, go)


async def run_turn(
    daemon: Daemon, session_id: str, turn_id: str, text: str, *, reflection: str | None = None
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
        services={
            "rename": rename,
            "save_todos": lambda todos: daemon.store.set_state(session_id, "todos", todos),
            "tool_outputs": ToolOutputStore(daemon.db),
            "recall": recall_text(daemon, session_id),
            "memory": held.enter_context(memory_lease(daemon, str(bridge.workspace))),
        },
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
            daemon, session_id, settings.providers, lambda e: rt.emit(turn_id, e), provider.stream
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
