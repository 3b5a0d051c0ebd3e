"""Decode an Anthropic Messages SSE stream into provider events.

``message_start`` carries the prompt usage (split into uncached input, cache
reads and cache writes), ``message_delta`` the running output count and the
stop reason. Usage is reported once, at ``message_stop``, with the prompt
total summed. Thinking and citation deltas are not surfaced; unknown event
types are ignored, as Anthropic asks clients to do.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from bonsai.domain import ToolCall
from bonsai.services.providers.sse import SseEvent, json_data
from bonsai.services.providers.types import (
    ErrorKind,
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

ERROR_KINDS: dict[str, ErrorKind] = {
    "rate_limit_error": "rate_limit",
    "overloaded_error": "server",
    "api_error": "server",
    "authentication_error": "auth",
    "permission_error": "auth",
    "invalid_request_error": "bad_request",
    "request_too_large": "bad_request",
    "not_found_error": "bad_request",
    "timeout_error": "timeout",
}
USAGE_KEYS = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


@dataclass
class _ToolBlock:
    index: int
    id: str
    name: str
    args: list[str] = field(default_factory=list)


@dataclass
class AnthropicStreamState:
    label: str
    tools: dict[int, _ToolBlock] = field(default_factory=dict)
    n_calls: int = 0
    usage: dict[str, int] = field(default_factory=dict)
    stop_reason: str | None = None

    def on_event(self, data: dict[str, Any]) -> list[ProviderEvent]:
        kind = data.get("type")
        handler = {
            "message_start": self._message_start,
            "content_block_start": self._block_start,
            "content_block_delta": self._block_delta,
            "content_block_stop": self._block_stop,
            "message_delta": self._message_delta,
            "error": self._error,
        }.get(str(kind))
        return handler(data) if handler else []

    def _take_usage(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        for key in (*USAGE_KEYS, "output_tokens"):
            value = usage.get(key)
            if value is None:
                continue
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ProviderError("malformed", f"{self.label} usage {key!r} is {value!r}")
            self.usage[key] = value

    def _message_start(self, data: dict[str, Any]) -> list[ProviderEvent]:
        message = data.get("message")
        if not isinstance(message, dict):
            raise ProviderError("malformed", f"{self.label} message_start has no message")
        self._take_usage(message.get("usage"))
        return []

    def _block_start(self, data: dict[str, Any]) -> list[ProviderEvent]:
        block = data.get("content_block") or {}
        index = data.get("index")
        if not isinstance(index, int) or not isinstance(block, dict):
            raise ProviderError("malformed", f"{self.label} content_block_start lacks index/block")
        if block.get("type") == "text":
            return [TextDelta(text=block["text"])] if block.get("text") else []
        if block.get("type") != "tool_use":
            return []
        if not block.get("id") or not block.get("name"):
            raise ProviderError("malformed", f"{self.label} tool_use block without id or name")
        tool = _ToolBlock(index=self.n_calls, id=str(block["id"]), name=str(block["name"]))
        self.n_calls += 1
        self.tools[index] = tool
        return [ToolCallStarted(index=tool.index, id=tool.id, name=tool.name)]

    def _block_delta(self, data: dict[str, Any]) -> list[ProviderEvent]:
        delta = data.get("delta") or {}
        if not isinstance(delta, dict):
            raise ProviderError("malformed", f"{self.label} content_block_delta without a delta")
        if delta.get("type") == "text_delta" and delta.get("text"):
            return [TextDelta(text=str(delta["text"]))]
        if delta.get("type") != "input_json_delta":
            return []
        tool = self.tools.get(data.get("index", -1))
        if tool is None:
            raise ProviderError("malformed", f"{self.label} input_json_delta for unknown block")
        part = str(delta.get("partial_json") or "")
        if not part:
            return []
        tool.args.append(part)
        return [ToolCallArgsDelta(index=tool.index, text=part)]

    def _block_stop(self, data: dict[str, Any]) -> list[ProviderEvent]:
        tool = self.tools.pop(data.get("index", -1), None)
        if tool is None:
            return []
        arguments = "".join(tool.args) or "{}"
        return [ToolCallDone(call=ToolCall(id=tool.id, name=tool.name, arguments=arguments))]

    def _message_delta(self, data: dict[str, Any]) -> list[ProviderEvent]:
        delta = data.get("delta") or {}
        if isinstance(delta, dict) and delta.get("stop_reason"):
            self.stop_reason = str(delta["stop_reason"])
        self._take_usage(data.get("usage"))
        return []

    def _error(self, data: dict[str, Any]) -> list[ProviderEvent]:
        raw = data.get("error")
        error: dict[str, Any] = raw if isinstance(raw, dict) else {}
        etype = str(error.get("type", "api_error"))
        message = redact_error(str(error.get("message", "no message")))
        kind = ERROR_KINDS.get(etype, "server")
        raise ProviderError(kind, f"{self.label} reported {etype} mid-stream: {message}")

    def on_stop(self) -> list[ProviderEvent]:
        u = self.usage
        total = sum(u.get(k, 0) for k in USAGE_KEYS)
        report = UsageReport(
            input_tokens=total,
            output_tokens=u.get("output_tokens", 0),
            cached_input_tokens=u.get("cache_read_input_tokens", 0),
            cache_creation_tokens=u.get("cache_creation_input_tokens", 0),
        )
        default = "tool_use" if self.n_calls else "end_turn"
        return [report, StreamDone(stop_reason=self.stop_reason or default)]


async def decode_anthropic(
    events: AsyncIterator[SseEvent], label: str
) -> AsyncGenerator[ProviderEvent, None]:
    state = AnthropicStreamState(label)
    async for event in events:
        data = json_data(event, label)
        if data.get("type", event.event) == "message_stop":
            for out in state.on_stop():
                yield out
            return
        for out in state.on_event(data):
            yield out
    raise ProviderError("broken_stream", f"{label} stream ended before message_stop")
