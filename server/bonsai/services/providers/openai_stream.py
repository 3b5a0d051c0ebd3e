"""Decode a Chat Completions SSE stream into provider events.

Parallel tool calls arrive interleaved by ``index``; a call is complete when
the choice reports a ``finish_reason`` (or at ``[DONE]``). Usage (with
``include_usage``) arrives in a last chunk whose ``choices`` is empty; it is
reported once, right before ``StreamDone``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from bonsai.domain import ToolCall
from bonsai.services.providers.sse import SseEvent, json_data
from bonsai.services.providers.types import (
    ProviderError,
    ProviderEvent,
    StreamDone,
    TextDelta,
    ToolCallArgsDelta,
    ToolCallDone,
    ToolCallStarted,
    UsageReport,
)
from bonsai.services.redaction import redact_error

log = logging.getLogger("bonsai.providers")

STOP_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


def _count(usage: dict[str, Any], key: str, label: str) -> int | None:
    value = usage.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ProviderError("malformed", f"{label} usage field {key!r} is not a count: {value!r}")
    return value


def openai_usage(usage: dict[str, Any], label: str) -> UsageReport:
    """Normalise OpenAI and DeepSeek usage (DeepSeek adds ``prompt_cache_hit_tokens``)."""
    details = usage.get("prompt_tokens_details")
    cached = _count(details, "cached_tokens", label) if isinstance(details, dict) else None
    hit = _count(usage, "prompt_cache_hit_tokens", label)
    miss = _count(usage, "prompt_cache_miss_tokens", label)
    prompt = _count(usage, "prompt_tokens", label)
    if prompt is None and hit is not None:
        prompt = hit + (miss or 0)
    return UsageReport(
        input_tokens=prompt or 0,
        output_tokens=_count(usage, "completion_tokens", label) or 0,
        cached_input_tokens=cached if cached is not None else (hit or 0),
        cache_creation_tokens=0,
    )


@dataclass
class _Call:
    index: int
    id: str
    name: str
    args: list[str] = field(default_factory=list)


@dataclass
class OpenAIStreamState:
    label: str
    require_done: bool = True
    calls: list[_Call] = field(default_factory=list)
    by_wire_index: dict[int, _Call] = field(default_factory=dict)
    finish: str | None = None
    usage: UsageReport | None = None
    _closed_calls: bool = False

    def on_chunk(self, chunk: dict[str, Any]) -> list[ProviderEvent]:
        if chunk.get("error"):
            raise ProviderError(
                "server",
                f"{self.label} reported an error mid-stream: {redact_error(str(chunk['error']))}",
            )
        if isinstance(chunk.get("usage"), dict):
            self.usage = openai_usage(chunk["usage"], self.label)
        choices = chunk.get("choices") or []
        if not isinstance(choices, list):
            raise ProviderError("malformed", f"{self.label} chunk has non-list 'choices'")
        events: list[ProviderEvent] = []
        for choice in choices[:1]:
            events.extend(self._on_choice(choice))
        return events

    def _on_choice(self, choice: Any) -> list[ProviderEvent]:
        if not isinstance(choice, dict):
            raise ProviderError("malformed", f"{self.label} chunk choice is not an object")
        delta = choice.get("delta") or {}
        if not isinstance(delta, dict):
            raise ProviderError("malformed", f"{self.label} chunk delta is not an object")
        events: list[ProviderEvent] = []
        content = delta.get("content")
        if isinstance(content, str) and content:
            events.append(TextDelta(text=content))
        for part in delta.get("tool_calls") or []:
            events.extend(self._on_tool_part(part))
        if choice.get("finish_reason"):
            self.finish = str(choice["finish_reason"])
            events.extend(self._close_calls())
        return events

    def _on_tool_part(self, part: Any) -> list[ProviderEvent]:
        if not isinstance(part, dict) or not isinstance(part.get("index", 0), int):
            raise ProviderError("malformed", f"{self.label} sent a tool call delta without index")
        wire_index = part.get("index", 0)
        fn = part.get("function") or {}
        if not isinstance(fn, dict):
            raise ProviderError("malformed", f"{self.label} tool call 'function' is not an object")
        call = self.by_wire_index.get(wire_index)
        events: list[ProviderEvent] = []
        if call is None or (part.get("id") and part["id"] != call.id):
            call = self._start_call(wire_index, part, fn)
            events.append(ToolCallStarted(index=call.index, id=call.id, name=call.name))
        args = fn.get("arguments")
        if isinstance(args, str) and args:
            call.args.append(args)
            events.append(ToolCallArgsDelta(index=call.index, text=args))
        return events

    def _start_call(self, wire_index: int, part: dict[str, Any], fn: dict[str, Any]) -> _Call:
        name = fn.get("name")
        if not isinstance(name, str) or not name:
            raise ProviderError(
                "malformed", f"{self.label} started tool call {wire_index} without a name"
            )
        index = len(self.calls)
        call = _Call(index=index, id=str(part.get("id") or f"call_{index}"), name=name)
        self.calls.append(call)
        self.by_wire_index[wire_index] = call
        return call

    def _close_calls(self) -> list[ProviderEvent]:
        if self._closed_calls:
            return []
        self._closed_calls = True
        return [
            ToolCallDone(call=ToolCall(id=c.id, name=c.name, arguments="".join(c.args) or "{}"))
            for c in self.calls
        ]

    def on_done(self) -> list[ProviderEvent]:
        events = self._close_calls()
        if self.usage is not None:
            events.append(self.usage)
        default = "tool_use" if self.calls else "end_turn"
        reason = STOP_REASONS.get(self.finish, self.finish) if self.finish else default
        events.append(StreamDone(stop_reason=reason))
        return events

    def on_eof(self) -> list[ProviderEvent]:
        if self.finish is None or self.require_done:
            raise ProviderError(
                "broken_stream",
                f"{self.label} stream ended before [DONE] "
                f"({'after' if self.finish else 'without'} a finish_reason)",
            )
        log.warning("%s: stream ended without [DONE]; taking the finished reply", self.label)
        return self.on_done()


async def decode_openai(
    events: AsyncIterator[SseEvent], label: str, *, require_done: bool = True
) -> AsyncGenerator[ProviderEvent, None]:
    """``require_done=False`` accepts servers that omit ``[DONE]`` after a finish_reason."""
    state = OpenAIStreamState(label, require_done=require_done)
    async for event in events:
        if event.data.strip() == "[DONE]":
            for out in state.on_done():
                yield out
            return
        for out in state.on_chunk(json_data(event, label)):
            yield out
    for out in state.on_eof():
        yield out


def decode_openai_reply(reply: dict[str, Any], label: str) -> list[ProviderEvent]:
    """A whole (non-streamed) reply as the same events a stream gives: the message
    is decoded as one chunk whose delta is the whole message."""
    choices = reply.get("choices")
    chunk: dict[str, Any] = {"usage": reply.get("usage")}
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message") or {}
        if not isinstance(message, dict):
            raise ProviderError("malformed", f"{label} reply message is not an object")
        calls = message.get("tool_calls") or []
        if not isinstance(calls, list):
            raise ProviderError("malformed", f"{label} reply tool_calls is not a list")
        delta = {
            "content": message.get("content"),
            "tool_calls": [
                {**c, "index": i} if isinstance(c, dict) else c for i, c in enumerate(calls)
            ],
        }
        chunk["choices"] = [{"delta": delta, "finish_reason": choices[0].get("finish_reason")}]
    state = OpenAIStreamState(label)
    return [*state.on_chunk(chunk), *state.on_done()]
