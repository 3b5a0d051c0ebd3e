"""The bottom of the session package: what every session module uses.

A session's runtime (its turn queue and event stream), the token counter per
model, the session's tools, the context bridge over its log, and the
``bonsai/ctx/changed`` notification with the newest assembly kept for
``bonsai/config/get``.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bonsai.agent.context_bridge import ContextBridge
from bonsai.agent.runtime import SessionRuntime
from bonsai.agent.tools import recall
from bonsai.agent.tools.base import Tool
from bonsai.agent.tools.memory_write import memory_write_tool
from bonsai.agent.tools.registry import builtin_tools, session_tools, validate_hidden
from bonsai.core.context import Assembly, AssemblyMemo
from bonsai.core.context.presets import effective_context
from bonsai.protocol import models as m
from bonsai.services.providers import make_provider, resolve_api_key
from bonsai.services.providers.pricing import pricing_of
from bonsai.services.providers.types import ProviderError
from bonsai.services.tokens import TokenCounter, estimator_for, start_loading
from bonsai.session.fast_model import fast_summary
from bonsai.session.host import Host
from bonsai.session.provider_choice import session_settings
from bonsai.session.server_facts import window_for
from bonsai.settings import ProviderSettings, Settings

log = logging.getLogger("bonsai.chat")
# the loop (a turn) and the view worker (a view) may both build a model's first counter
_counters_lock = threading.Lock()


def runtime(daemon: Host, session_id: str) -> SessionRuntime:
    runtimes = daemon.hub.runtimes
    existing = runtimes.get(session_id)
    if existing is None:

        def publish(event: m.ChatEventWire) -> None:
            daemon.broadcast(session_id, "bonsai/chat/event", event)

        existing = runtimes[session_id] = SessionRuntime(session_id, publish)
    return existing


def counter_for(daemon: Host, providers: ProviderSettings, info: Any) -> TokenCounter:
    """One counter per model (its count cache and calibration live across sessions).
    Anthropic models count through the count_tokens API when a key is configured.

    The first session that needs a model's counter begins loading its tokenizer in a
    thread (``services/tokens/deferred.py``); its counts wait for the load. A daemon
    that no session has asked to count never loads one."""
    counters = daemon.hub.counters
    with _counters_lock:  # one counter even when a turn and a view ask at once
        counter = counters.get(providers.model)
        if counter is None:
            counter = counters[providers.model] = _new_counter(daemon, providers, info)
            start_loading(counter.estimator)  # off the loop, while the client's next asks
        return counter


def tokenizer_warmer(daemon: Host) -> Callable[[], object]:
    """Loading the tokenizer of the model the settings name (once per process; run it
    off the loop). Nothing is kept in the hub: a model's counter is built when first
    asked for, with what the server said about the model by then. The daemon does not
    run it at its start any more: the first counter begins its own load
    (:func:`counter_for`); this is for a caller that knows counting is coming."""
    providers = daemon.settings().settings.providers
    info = window_for(daemon, providers).info
    cache_dir = daemon.home / "cache" / "tiktoken"

    def warm() -> object:
        counter = estimator_for(
            info, cache_dir=cache_dir, tokenizer_path=None, model=providers.model
        )
        return counter.count_text("warm")

    return warm


def _new_counter(daemon: Host, providers: ProviderSettings, info: Any) -> TokenCounter:
    api = None
    if info.family == "anthropic" and resolve_api_key(providers, os.environ):
        provider = make_provider(providers, env=os.environ)
        api = getattr(provider, "count_tokens_body", None)
    return estimator_for(
        info,
        cache_dir=daemon.home / "cache" / "tiktoken",
        tokenizer_path=None,
        model=providers.model,
        count_tokens_api=api,
        counting=daemon.hub.counting,
        deferred=True,
    )


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


_specs: dict[tuple[object, ...], list[dict[str, Any]]] = {}


def tool_specs(settings: Settings) -> list[dict[str, Any]]:
    """The specs of ``tools_for(settings, include_hidden=True)``, made once per the few
    settings that choose them (the tools are static): every view and turn asks."""
    key = (
        settings.episodes.enabled,
        settings.memory.enabled,
        tuple(settings.tools.hidden),
        effective_context(settings.context).smol,
    )
    specs = _specs.get(key)
    if specs is None:  # a bad hidden name raises here, and is never kept
        specs = _specs[key] = [t.spec() for t in tools_for(settings, include_hidden=True)]
    return list(specs)


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


def bridge_for(daemon: Host, session_id: str) -> ContextBridge:
    row = daemon.store.get(session_id)
    settings = session_settings(daemon, session_id, row.workspace)
    providers = settings.providers
    window = window_for(daemon, providers)  # registry row + what the server said
    peers = [f"client {c.id} ({c.kind})" for c in daemon.subscribers(session_id)]
    memos = daemon.hub.memos
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
        tools=tool_specs(settings),
        repomap_text=daemon.hub.repomap_text.get(session_id) if settings.repomap.enabled else None,
        peers=peers,
        pricing=pricing_of(window.info, name=providers.model),  # the prices that will be billed
        stable=daemon.hub.stable_parts,
    )


def notify_ctx(
    daemon: Host, session_id: str, assembly: Assembly, events: list[m.CtxEvent] | None = None
) -> None:
    totals = assembly.totals
    workspace = daemon.store.get(session_id).workspace
    daemon.hub.last_assembly[workspace] = m.LastAssembly(
        session_id=session_id,
        used=totals.used,
        usable=totals.usable,
        percent=round(totals.percent, 2),
        system_parts=[part.id for part in assembly.system],
        messages=len(assembly.messages),
        tools=[tool["name"] for tool in assembly.tools],
        prefix_hash=assembly.prefix_hash,
    )
    params = m.CtxChangedParams(
        session_id=session_id,
        percent=round(totals.percent, 2),
        used=totals.used,
        usable=totals.usable,
        events=events or None,
    )
    daemon.broadcast(session_id, "bonsai/ctx/changed", params)
