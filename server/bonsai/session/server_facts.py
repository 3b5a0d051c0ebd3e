"""What the daemon knows about the server a session talks to.

One ``FactsCache`` per daemon (per base URL and model) is filled before a turn
and before the ledger is shown (``ensure_facts``); ``window_for`` is the sync
read every bridge uses. ``watch_tools`` wraps a provider's stream and tells the
user once per session when a server that says it cannot call tools answered a
request that offered tools with plain text.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing

from bonsai.protocol import models as m
from bonsai.services.providers.discovery import FactsCache, ServerFacts, discover
from bonsai.services.providers.factory import base_url_for, resolve_api_key
from bonsai.services.providers.text_tools import text_tools
from bonsai.services.providers.types import (
    ChatRequest,
    ProviderError,
    ProviderEvent,
    ToolCallDone,
)
from bonsai.services.providers.window import WindowFacts, resolve_window
from bonsai.session.host import Host
from bonsai.session.provider_choice import session_settings
from bonsai.settings import ProviderSettings

log = logging.getLogger("bonsai.chat")
NOTES_KEY = "server_notes"
Stream = Callable[[ChatRequest], AsyncGenerator[ProviderEvent, None]]


def facts_cache(daemon: Host) -> FactsCache:
    return daemon.hub.server_facts


def discovers(providers: ProviderSettings) -> bool:
    """Only OpenAI-compatible servers are asked (hosted APIs and the sim are known)."""
    return providers.provider == "openai-compatible" and providers.discover


async def facts_for(daemon: Host, providers: ProviderSettings) -> ServerFacts | None:
    if not discovers(providers):
        return None
    base_url = base_url_for(providers)
    headers: dict[str, str] = {}
    try:
        key = resolve_api_key(providers, os.environ)
    except ProviderError:
        key = None
    if key:
        headers["authorization"] = f"Bearer {key}"

    async def fetch() -> ServerFacts:
        facts = await discover(base_url, providers.model, headers=headers)
        log.info("model facts for %s at %s: %s", providers.model, base_url, facts)
        return facts

    return await facts_cache(daemon).get(base_url, providers.model, fetch)


async def ensure_facts(daemon: Host, session_id: str) -> None:
    """Learn the session's server facts (cached) before a bridge is built."""
    row = daemon.store.get(session_id)
    await facts_for(daemon, session_settings(daemon, session_id, row.workspace).providers)


def window_for(daemon: Host, providers: ProviderSettings) -> WindowFacts:
    facts = None
    if discovers(providers):
        facts = facts_cache(daemon).peek(base_url_for(providers), providers.model)
    return resolve_window(providers, facts)


def session_notes(daemon: Host, session_id: str) -> list[str]:
    raw = daemon.store.get_state(session_id, NOTES_KEY, []) or []
    return [str(note) for note in raw if isinstance(note, str)]


def ledger_notes(window: WindowFacts | None, notes: list[str]) -> list[str]:
    out = list(window.notes) if window is not None else []
    return out + [note for note in notes if note not in out]


def tools_note(providers: ProviderSettings, facts: ServerFacts) -> str:
    where = facts.tools_source or "the server's model facts"
    return (
        f"{providers.model} on this server cannot call tools ({where}): the agent's tools "
        'were offered but never used. Set providers.tool_protocol to "text" to describe '
        "the tools in the prompt instead (works with models that follow instructions; "
        "see docs/providers.md)"
    )


def watch_tools(
    daemon: Host,
    session_id: str,
    providers: ProviderSettings,
    emit: Callable[[m.ChatEvent], None],
    stream: Stream,
) -> Stream:
    """Wrap ``stream``: after a reply to a request with tools that called none, when
    the server's facts say tools are unsupported, tell the user once (chat + ledger)."""

    async def watched(request: ChatRequest) -> AsyncGenerator[ProviderEvent, None]:
        called = False
        async with aclosing(stream(request)) as events:
            async for event in events:
                called = called or isinstance(event, ToolCallDone)
                yield event
        native = providers.tool_protocol == "native"
        if not request.tools or called or not native or not discovers(providers):
            return
        facts = facts_cache(daemon).peek(base_url_for(providers), providers.model)
        if facts is None or facts.tools is not False:
            return
        note = tools_note(providers, facts)
        notes = session_notes(daemon, session_id)
        if note in notes:
            return
        daemon.store.set_state(session_id, NOTES_KEY, [*notes, note])
        emit(m.NoticeEvent(message=note))

    return watched


def turn_stream(
    daemon: Host,
    session_id: str,
    providers: ProviderSettings,
    emit: Callable[[m.ChatEvent], None],
    stream: Stream,
) -> Stream:
    """The stream a turn uses: the text tool protocol when configured, watched for
    servers that cannot call tools."""
    inner = text_tools(stream) if providers.tool_protocol == "text" else stream
    return watch_tools(daemon, session_id, providers, emit, inner)
