"""What the daemon knows about the server a session talks to.

One ``FactsCache`` per daemon (per base URL and model) is filled before a turn
and before the ledger is shown (``ensure_facts``); ``window_for`` is the sync
read every bridge uses. Where the server does not say whether it can call tools,
``facts_for`` asks with a probe request (``tool_probe``), once per base URL and
model. ``turn_stream`` picks how tools reach the model (``tool_mode``) and tells
the user once per session when the server cannot call them.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncGenerator, Callable
from typing import Any, Literal

from bonsai.protocol import models as m
from bonsai.services.providers.discovery import FactsCache, ServerFacts, discover
from bonsai.services.providers.factory import base_url_for, resolve_api_key
from bonsai.services.providers.text_tools import text_request, text_tools
from bonsai.services.providers.tool_probe import (
    probe_streamed_calls,
    probe_text_protocol,
    probe_tools,
)
from bonsai.services.providers.types import (
    ChatRequest,
    ProviderError,
    ProviderEvent,
)
from bonsai.services.providers.window import WindowFacts, resolve_window
from bonsai.session.host import Host
from bonsai.session.provider_choice import session_settings
from bonsai.settings import ProviderSettings

log = logging.getLogger("bonsai.chat")
NOTES_KEY = "server_notes"
ToolMode = Literal["native", "text"]
Stream = Callable[[ChatRequest], AsyncGenerator[ProviderEvent, None]]


def facts_cache(daemon: Host) -> FactsCache:
    return daemon.hub.server_facts


def discovers(providers: ProviderSettings) -> bool:
    """Only OpenAI-compatible servers are asked (hosted APIs and the sim are known)."""
    return providers.provider == "openai-compatible" and providers.discover


def _headers(providers: ProviderSettings) -> dict[str, str]:
    try:
        key = resolve_api_key(providers, os.environ)
    except ProviderError:
        key = None
    return {"authorization": f"Bearer {key}"} if key else {}


def _carry(facts: ServerFacts, previous: ServerFacts | None) -> ServerFacts:
    """Keep what earlier probes learned when the facts are fetched again (probes
    cost a generation; the cheap GETs are repeated, the probes are not)."""
    if previous is None:
        return facts
    update: dict[str, Any] = {}
    if facts.tools is None and previous.tools_probed:
        update |= {
            "tools": previous.tools,
            "tools_source": previous.tools_source,
            "tools_probed": True,
            "stream_tools": previous.stream_tools,
            "stream_tools_source": previous.stream_tools_source,
        }
    if (update.get("tools", facts.tools) is False) and previous.tools is False:
        update |= {
            "text_tools": previous.text_tools,
            "text_tools_source": previous.text_tools_source,
        }
    return facts.model_copy(update=update) if update else facts


async def facts_for(daemon: Host, providers: ProviderSettings) -> ServerFacts | None:
    """The server's facts for the session's model: discovery (cached), then, once
    per base URL and model, a tool probe where the server does not say, and a
    text-protocol probe where tools turned out unsupported and the protocol is auto."""
    if not discovers(providers):
        return None
    base_url, model = base_url_for(providers), providers.model
    headers = _headers(providers)
    cache = facts_cache(daemon)

    async def fetch() -> ServerFacts:
        found = await discover(base_url, model, headers=headers)
        facts = _carry(found, cache.peek(base_url, model))
        if facts.reachable and facts.tools is None and not facts.tools_probed:
            probe = await probe_tools(base_url, model, headers=headers)
            facts = facts.model_copy(
                update={"tools": probe.tools, "tools_source": probe.source, "tools_probed": True}
            )
            if probe.tools:  # forced calls work; do chosen ones stream?
                streamed = await probe_streamed_calls(base_url, model, headers=headers)
                facts = facts.model_copy(
                    update={"stream_tools": streamed.tools, "stream_tools_source": streamed.source}
                )
        log.info("model facts for %s at %s: %s", model, base_url, facts)
        return facts

    facts = await cache.get(base_url, model, fetch)
    if _wants_text_probe(facts, providers):
        text = await probe_text_protocol(base_url, model, headers=headers)
        facts = facts.model_copy(
            update={"text_tools": text.tools, "text_tools_source": text.source}
        )
        cache.put(base_url, model, facts)
        log.info("text tool protocol probe for %s at %s: %s", model, base_url, text.source)
    if facts.served_model and facts.served_model != model:
        # the model a session nobody chose a model for adopts (provider_choice.served_model)
        cache.put(base_url, facts.served_model, facts)
    return facts


def _wants_text_probe(facts: ServerFacts, providers: ProviderSettings) -> bool:
    return (
        facts.reachable
        and facts.tools is False
        and facts.text_tools is None
        and providers.tool_protocol == "auto"
    )


async def ensure_facts(daemon: Host, session_id: str) -> None:
    """Learn the session's server facts (cached) before a bridge is built."""
    row = daemon.store.get(session_id)
    await facts_for(daemon, session_settings(daemon, session_id, row.workspace).providers)


def facts_known(daemon: Host, session_id: str) -> bool:
    """Whether :func:`ensure_facts` would return at once: nothing to discover, or the
    facts cached and fresh, with no probe due or under way."""
    row = daemon.store.get(session_id)
    providers = session_settings(daemon, session_id, row.workspace).providers
    if not discovers(providers):
        return True
    facts = facts_cache(daemon).fresh(base_url_for(providers), providers.model)
    if facts is None or _wants_text_probe(facts, providers):
        return False
    served = facts.served_model
    return (
        not served
        or served == providers.model
        or facts_cache(daemon).fresh(base_url_for(providers), served) is not None
    )


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


def tool_mode(providers: ProviderSettings, facts: ServerFacts | None) -> ToolMode:
    """How a turn gives the model its tools: ``auto`` uses the text protocol only
    when the server cannot call tools and the model followed the text protocol
    in a probe."""
    if providers.tool_protocol != "auto":
        return providers.tool_protocol
    if facts is not None and facts.tools is False and facts.text_tools is True:
        return "text"
    return "native"


def as_sent(daemon: Host, providers: ProviderSettings, request: ChatRequest) -> ChatRequest:
    """``request`` as a turn would send it (the text protocol applied when chosen)."""
    facts = None
    if discovers(providers):
        facts = facts_cache(daemon).peek(base_url_for(providers), providers.model)
    return text_request(request) if tool_mode(providers, facts) == "text" else request


def tools_note(providers: ProviderSettings, facts: ServerFacts | None) -> str | None:
    """What to tell the user about tools on this server, or None (nothing to say)."""
    if facts is None or facts.tools is not False or providers.tool_protocol == "text":
        return None
    where = facts.tools_source or "the server's model facts"
    head = f"{providers.model} on this server cannot call tools ({where})"
    if tool_mode(providers, facts) == "text":
        return (
            f"{head}: it followed bonsai's text tool protocol in a probe, so the tools are "
            "described in the prompt and calls are read from the reply (set "
            'providers.tool_protocol to "native" to stop this)'
        )
    if providers.tool_protocol == "native":
        return (
            f"{head}: the agent's tools are offered but cannot be used. Set "
            'providers.tool_protocol to "text" to describe the tools in the prompt instead '
            "(works with models that follow instructions; see docs/providers.md)"
        )
    text = (
        "it did not follow bonsai's text tool protocol in a probe either"
        if facts.text_tools is False
        else "and whether it can follow bonsai's text tool protocol is not known"
    )
    return (
        f"{head}, {text}: the agent has no tools with this model. Set "
        'providers.tool_protocol to "text" to try the text protocol anyway, or serve a '
        "model or chat format with tool support (llama_cpp.server: --chat_format "
        "chatml-function-calling; see docs/providers.md)"
    )


def stream_note(providers: ProviderSettings, facts: ServerFacts | None) -> str | None:
    if facts is None or facts.stream_tools is not False or tool_mode(providers, facts) != "native":
        return None
    return (
        f"{providers.model} on this server cannot stream a tool call it chooses "
        f"({facts.stream_tools_source}): steps that offer tools ask for the whole reply at "
        "once, so their text appears when the step is done"
    )


def watch_tools(
    daemon: Host,
    session_id: str,
    providers: ProviderSettings,
    emit: Callable[[m.ChatEvent], None],
    stream: Stream,
) -> Stream:
    """Wrap ``stream``: at the first request that offers tools, when the server's
    facts (or a probe) say it cannot call them, tell the user once per session,
    in the chat and in the ledger's notes."""

    def watched(request: ChatRequest) -> AsyncGenerator[ProviderEvent, None]:
        # told when the step's stream is asked for, just before it is read; the stream
        # itself is handed on as it is (no generator layer more for every delta)
        if request.tools and discovers(providers):
            facts = facts_cache(daemon).peek(base_url_for(providers), providers.model)
            for note in (tools_note(providers, facts), stream_note(providers, facts)):
                notes = session_notes(daemon, session_id)
                if note is not None and note not in notes:
                    daemon.store.set_state(session_id, NOTES_KEY, [*notes, note])
                    emit(m.NoticeEvent(message=note))
        return stream(request)

    return watched


def whole_when_tools(stream: Stream, complete: Stream) -> Stream:
    """Requests that offer tools are answered whole (``complete``); others stream."""

    def chosen(request: ChatRequest) -> AsyncGenerator[ProviderEvent, None]:
        return (complete if request.tools else stream)(request)

    return chosen


def turn_stream(
    daemon: Host,
    session_id: str,
    providers: ProviderSettings,
    emit: Callable[[m.ChatEvent], None],
    stream: Stream,
    complete: Stream | None = None,
) -> Stream:
    """The stream a turn uses: the text tool protocol when configured (or chosen by
    ``auto``); whole replies for requests with tools on a server that cannot stream
    the calls its model chooses (``complete``: the provider's non-streamed call);
    and a notice when the server cannot call tools."""
    facts = None
    if discovers(providers):
        facts = facts_cache(daemon).peek(base_url_for(providers), providers.model)
    mode = tool_mode(providers, facts)
    inner = text_tools(stream) if mode == "text" else stream
    whole = facts is not None and facts.stream_tools is False
    if mode == "native" and complete is not None and whole:
        inner = whole_when_tools(inner, complete)
    return watch_tools(daemon, session_id, providers, emit, inner)
