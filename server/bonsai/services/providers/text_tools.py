"""A text protocol for tools, for servers whose model cannot call tools natively.

With ``providers.tool_protocol = "text"`` the request carries no ``tools``.
Instead one system block lists each tool (name, description, JSON schema) and
asks for calls written as::

    <tool_call>{"name": "read_file", "arguments": {"path": "app.py"}}</tool_call>

Earlier calls are replayed the same way in assistant messages, and results
come back as user messages wrapped in ``<tool_result name=… id=…>``. The reply
is parsed as it streams: text outside the tags streams as usual, each complete
block becomes a ``ToolCallDone``. The session log is the same as with native
tools (calls and results stay paired), so switching back loses nothing.

Limits (honest ones): the model must follow the format, which small models
often do not; a block whose JSON does not parse, or that names a tool not
offered, is left in the reply as text (the model sees it and can retry); there
is no forced call (``tool_choice``) and no server-side validation of
arguments.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

from bonsai.domain import Message, ToolCall
from bonsai.services.providers.types import (
    ChatRequest,
    ProviderEvent,
    StreamDone,
    SystemBlock,
    TextDelta,
    ToolCallDone,
    ToolSpec,
)

OPEN, CLOSE = "<tool_call>", "</tool_call>"
Stream = Callable[[ChatRequest], AsyncGenerator[ProviderEvent, None]]


def tools_prompt(tools: list[ToolSpec]) -> str:
    lines = [
        "You can use tools. To call one, write exactly one line per call, in this form and "
        "nothing else on that line:",
        f'{OPEN}{{"name": "<tool name>", "arguments": {{<arguments as JSON>}}}}{CLOSE}',
        "Then stop and wait: the result comes back in a <tool_result> message. "
        "Call only the tools listed here. Available tools:",
    ]
    for tool in tools:
        schema = json.dumps(tool.parameters, ensure_ascii=False, separators=(",", ":"))
        lines.append(f"- {tool.name}: {tool.description.strip()} Arguments schema: {schema}")
    return "\n".join(lines)


def _call_text(call: ToolCall) -> str:
    try:
        arguments: Any = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        arguments = call.arguments
    body = {"name": call.name, "arguments": arguments}
    return f"{OPEN}{json.dumps(body, ensure_ascii=False)}{CLOSE}"


def _as_text(message: Message) -> Message:
    if message.role == "assistant" and message.tool_calls:
        calls = "\n".join(_call_text(c) for c in message.tool_calls)
        content = f"{message.content}\n{calls}" if message.content else calls
        return Message(role="assistant", content=content)
    if message.role == "tool":
        name = message.name or "tool"
        text = f'<tool_result name="{name}" id="{message.tool_call_id}">\n'
        return Message(role="user", content=f"{text}{message.content}\n</tool_result>")
    return message


def text_request(req: ChatRequest) -> ChatRequest:
    """The same request with tools described in the prompt instead of ``tools``."""
    if not req.tools:
        return req
    system = [*req.system, SystemBlock(text=tools_prompt(list(req.tools)))]
    messages = [_as_text(m) for m in req.messages]
    return req.model_copy(update={"system": system, "messages": messages, "tools": []})


@dataclass
class TextCallParser:
    """Streaming split of a reply into text and ``<tool_call>`` blocks."""

    names: frozenset[str]
    buffer: str = ""
    inside: bool = False
    calls: list[ToolCall] = field(default_factory=list)

    def feed(self, text: str) -> str:
        """Text safe to show now (a possible tag start is held back)."""
        self.buffer += text
        shown: list[str] = []
        while True:
            if self.inside:
                end = self.buffer.find(CLOSE)
                if end < 0:
                    return "".join(shown)
                block, self.buffer = self.buffer[:end], self.buffer[end + len(CLOSE) :]
                self.inside = False
                shown.append(self._block(block))
                continue
            start = self.buffer.find(OPEN)
            if start >= 0:
                shown.append(self.buffer[:start])
                self.buffer = self.buffer[start + len(OPEN) :]
                self.inside = True
                continue
            keep = _partial_tag(self.buffer)
            shown.append(self.buffer[: len(self.buffer) - keep])
            self.buffer = self.buffer[len(self.buffer) - keep :]
            return "".join(shown)

    def finish(self) -> str:
        """What is left at the end of the reply (an unclosed block stays text)."""
        rest = (OPEN + self.buffer) if self.inside else self.buffer
        self.buffer, self.inside = "", False
        return rest

    def _block(self, block: str) -> str:
        try:
            parsed = json.loads(block)
        except json.JSONDecodeError:
            return f"{OPEN}{block}{CLOSE}"
        name = parsed.get("name") if isinstance(parsed, dict) else None
        if not isinstance(name, str) or name not in self.names:
            return f"{OPEN}{block}{CLOSE}"
        arguments = parsed.get("arguments", {})
        if isinstance(arguments, str):
            raw = arguments
        else:
            raw = json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)
        call_id = f"call_text_{uuid.uuid4().hex[:12]}"
        self.calls.append(ToolCall(id=call_id, name=name, arguments=raw))
        return ""


def _partial_tag(text: str) -> int:
    """Length of the longest suffix of ``text`` that starts ``<tool_call>``."""
    for size in range(min(len(OPEN) - 1, len(text)), 0, -1):
        if OPEN.startswith(text[-size:]):
            return size
    return 0


def text_tools(stream: Stream) -> Stream:
    """Wrap a provider's ``stream`` with the text protocol."""

    async def wrapped(req: ChatRequest) -> AsyncGenerator[ProviderEvent, None]:
        if not req.tools:
            async with aclosing(stream(req)) as plain:
                async for event in plain:
                    yield event
            return
        parser = TextCallParser(names=frozenset(t.name for t in req.tools))
        async with aclosing(stream(text_request(req))) as events:
            async for event in events:
                if isinstance(event, TextDelta):
                    shown = parser.feed(event.text)
                    if shown:
                        yield TextDelta(text=shown)
                elif isinstance(event, StreamDone):
                    rest = parser.finish()
                    if rest:
                        yield TextDelta(text=rest)
                    for call in parser.calls:
                        yield ToolCallDone(call=call)
                    reason = "tool_use" if parser.calls else event.stop_reason
                    yield StreamDone(stop_reason=reason)
                else:
                    yield event

    return wrapped
