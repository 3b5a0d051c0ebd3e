"""Asking a server whether it can call tools, when its facts do not say.

Some OpenAI-compatible servers publish nothing about tools (llama-cpp-python's
``llama_cpp.server``, vLLM) and accept ``tools`` in any case, then either use
them or silently drop them (llama-cpp-python's default handler renders the
model's own chat template without the tools and never returns a call). Two
small, streamed requests tell the difference, and each stops reading at the
first piece that decides:

1. ``tool_choice: "required"`` with one trivial tool (``ping``, no arguments). A
   server that supports tools must answer with a call; one that answers with
   text ignored the tools (``tools=False``).
2. When the server refuses ``"required"`` (older servers, llama-cpp-python's
   ``chatml-function-calling``, which only knows ``auto`` and a named tool): the
   same with ``tool_choice`` naming ``ping``. A call means tools work; text
   means they do not; a refusal again leaves the question open (``None``).

A model that cannot call tools natively may still follow bonsai's text tool
protocol (``text_tools``): ``probe_text_protocol`` asks once, with that
protocol's prompt, and checks whether a ``<tool_call>`` block naming ``ping``
parses out of the reply.

Each probe is bounded by a short timeout and a small ``max_tokens``, is greedy
(``temperature 0``), and never raises: a server that does not answer leaves
the facts as they were.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Awaitable
from typing import Any, Literal

import httpx
from pydantic import BaseModel, ConfigDict

from bonsai.services.providers.sse import iter_sse_text
from bonsai.services.providers.text_tools import TextCallParser, tools_prompt
from bonsai.services.providers.types import ToolSpec

log = logging.getLogger("bonsai.providers")

TOOL_PROBE_TIMEOUT_S = 20.0
TOOL_PROBE_MAX_TOKENS = 24
TEXT_PROBE_MAX_TOKENS = 40
PING = ToolSpec(
    name="ping",
    description="Check that tools work. Takes no arguments.",
    parameters={"type": "object", "properties": {}},
)
PROBE_PROMPT = "Call the ping tool now."

# a fresh connection per probe: a server that crashed on one probe (llama-cpp-python
# answers 200 and then drops the connection) must not poison the next
NO_REUSE = httpx.Limits(max_keepalive_connections=0)
Verdict = Literal["call", "text", "refused", "broken"]
# what a probe that went wrong raises: no answer, a malformed one; never passed on
PROBE_ERRORS = (httpx.HTTPError, ValueError, AttributeError, IndexError)


class ToolProbe(BaseModel):
    """What a probe showed: ``tools`` True/False, or None (open), and how."""

    model_config = ConfigDict(frozen=True)

    tools: bool | None
    source: str


def _url(base_url: str) -> str:
    return f"{base_url.rstrip('/')}/chat/completions"


def _client(
    headers: dict[str, str] | None,
    transport: httpx.AsyncBaseTransport | None,
    timeout_s: float,
) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        timeout=httpx.Timeout(timeout_s),
        transport=transport,
        headers=headers or {},
        limits=NO_REUSE,
    )


def probe_body(model: str, tool_choice: Any) -> dict[str, Any]:
    return {
        "model": model,
        "messages": [{"role": "user", "content": PROBE_PROMPT}],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": PING.name,
                    "description": PING.description,
                    "parameters": PING.parameters,
                },
            }
        ],
        "tool_choice": tool_choice,
        "max_tokens": TOOL_PROBE_MAX_TOKENS,
        "temperature": 0,
        "stream": True,
    }


def chunk_verdict(chunk: Any) -> Verdict | None:
    """One streamed chunk: a tool call, visible text, or nothing decided yet."""
    choices = chunk.get("choices") if isinstance(chunk, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    delta = choices[0].get("delta")
    if not isinstance(delta, dict):
        return None
    if delta.get("tool_calls") or delta.get("function_call"):
        return "call"
    content = delta.get("content")
    if isinstance(content, str) and content.strip():
        return "text"
    return None


async def _sse_data(response: httpx.Response) -> AsyncIterator[str]:
    """The data of each server-sent event of a streamed reply, as it arrives."""
    async for event in iter_sse_text(response.aiter_text()):
        yield event.data


async def _stream_verdict(
    client: httpx.AsyncClient, url: str, body: dict[str, Any]
) -> Verdict | None:
    """Stream one probe; stop at the first deciding chunk. None: a finished reply
    that decided nothing; ``broken``: the stream died before deciding."""
    async with client.stream("POST", url, json=body) as response:
        if response.status_code != 200:
            await response.aread()
            return "refused"
        if "json" in response.headers.get("content-type", ""):
            # a server that ignores stream=true (whole reply as one JSON body)
            reply = json.loads(await response.aread())
            message = (reply.get("choices") or [{}])[0].get("message") or {}
            if message.get("tool_calls") or message.get("function_call"):
                return "call"
            return "text" if str(message.get("content") or "").strip() else None
        try:
            async for data in _sse_data(response):
                if data.strip() == "[DONE]":
                    return None
                try:
                    verdict = chunk_verdict(json.loads(data))
                except ValueError:
                    continue
                if verdict is not None:
                    return verdict
        except httpx.TransportError:
            return "broken"
    return "broken"


async def _guarded(attempt: Awaitable[Verdict | None]) -> Verdict | None:
    """A connection the server closed on us (it crashed on the request) is a refusal;
    no connection or no answer in time is not (it propagates)."""
    try:
        return await attempt
    except (httpx.ConnectError, httpx.TimeoutException):
        raise
    except httpx.TransportError:
        return "broken"


async def probe_tools(
    base_url: str,
    model: str,
    *,
    headers: dict[str, str] | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    timeout_s: float = TOOL_PROBE_TIMEOUT_S,
) -> ToolProbe:
    """Does ``model`` on the server at ``base_url`` return tool calls? Never raises."""
    url = _url(base_url)
    attempts: list[tuple[Any, str]] = [
        ("required", 'tool_choice "required"'),
        ({"type": "function", "function": {"name": PING.name}}, "a named tool_choice"),
    ]
    try:
        async with _client(headers, transport, timeout_s) as client:
            for choice, label in attempts:
                verdict = await _guarded(_stream_verdict(client, url, probe_body(model, choice)))
                if verdict == "call":
                    return ToolProbe(
                        tools=True, source=f"probe: a request with {label} got a tool call"
                    )
                if verdict == "text":
                    return ToolProbe(
                        tools=False,
                        source=f"probe: a request with {label} got text, not a tool call",
                    )
                if verdict is None:
                    return ToolProbe(tools=None, source=f"probe: {label} got an empty reply")
    except PROBE_ERRORS as error:
        log.info("tool probe at %s: %s", base_url, type(error).__name__)
        return ToolProbe(tools=None, source=f"probe failed ({type(error).__name__})")
    return ToolProbe(tools=None, source="probe: the server refused tool_choice")


async def probe_streamed_calls(
    base_url: str,
    model: str,
    *,
    headers: dict[str, str] | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    timeout_s: float = TOOL_PROBE_TIMEOUT_S,
) -> ToolProbe:
    """For a server the first probe showed calling tools: does a streamed request
    with ``tool_choice: "auto"`` (what every agent step sends) stream the call?
    ``tools`` here means "streams tool calls"; text leaves it open (None)."""
    url = _url(base_url)
    try:
        async with _client(headers, transport, timeout_s) as client:
            verdict = await _guarded(_stream_verdict(client, url, probe_body(model, "auto")))
    except PROBE_ERRORS as error:
        return ToolProbe(tools=None, source=f"stream probe failed ({type(error).__name__})")
    if verdict == "call":
        return ToolProbe(tools=True, source="probe: a streamed tool call came back")
    if verdict in ("refused", "broken"):
        what = "was refused" if verdict == "refused" else "broke off before any reply"
        return ToolProbe(
            tools=False, source=f'probe: a streamed request with tool_choice "auto" {what}'
        )
    return ToolProbe(tools=None, source="probe: the model answered a streamed request with text")


async def probe_text_protocol(
    base_url: str,
    model: str,
    *,
    headers: dict[str, str] | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    timeout_s: float = TOOL_PROBE_TIMEOUT_S,
) -> ToolProbe:
    """Does ``model`` write a parseable ``<tool_call>`` block when asked with the text
    protocol's prompt? ``tools`` here means "follows the text protocol". Streamed;
    reading stops at the first parsed call."""
    url = _url(base_url)
    body = {
        "model": model,
        "messages": [
            {"role": "system", "content": tools_prompt([PING])},
            {"role": "user", "content": PROBE_PROMPT},
        ],
        "max_tokens": TEXT_PROBE_MAX_TOKENS,
        "temperature": 0,
        "stream": True,
    }
    parser = TextCallParser(names=frozenset({PING.name}))
    try:
        async with (
            _client(headers, transport, timeout_s) as client,
            client.stream("POST", url, json=body) as response,
        ):
            if response.status_code != 200:
                await response.aread()
                return ToolProbe(tools=None, source=f"text probe: HTTP {response.status_code}")
            async for data in _sse_data(response):
                if data.strip() == "[DONE]":
                    continue
                chunk = json.loads(data)
                delta = ((chunk.get("choices") or [{}])[0] or {}).get("delta") or {}
                parser.feed(str(delta.get("content") or ""))
                if parser.calls:
                    break
    except PROBE_ERRORS as error:
        return ToolProbe(tools=None, source=f"text probe failed ({type(error).__name__})")
    if parser.calls:
        return ToolProbe(tools=True, source="text probe: the model wrote a <tool_call> block")
    return ToolProbe(tools=False, source="text probe: the model answered without a <tool_call>")
