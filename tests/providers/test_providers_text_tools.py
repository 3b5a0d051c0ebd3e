"""The text tool protocol: tools described in the prompt, calls parsed from the
streamed reply, the log unchanged (calls and results stay paired)."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator

from bonsai.domain import Message, ToolCall
from bonsai.services.providers.text_tools import TextCallParser, text_request, text_tools
from bonsai.services.providers.types import (
    ChatRequest,
    ProviderEvent,
    StreamDone,
    TextDelta,
    ToolCallDone,
    ToolSpec,
)

READ = ToolSpec(
    name="read_file",
    description="Read a file.",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}},
)


def request(*messages: Message) -> ChatRequest:
    return ChatRequest(model="m", messages=list(messages), tools=[READ], max_tokens=64)


def test_the_request_describes_tools_in_the_prompt_and_replays_calls_as_text() -> None:
    call = ToolCall(id="c1", name="read_file", arguments='{"path": "app.py"}')
    req = request(
        Message(role="user", content="read app.py"),
        Message(role="assistant", content="Reading.", tool_calls=(call,)),
        Message(role="tool", content="def answer(): ...", tool_call_id="c1", name="read_file"),
    )
    out = text_request(req)
    assert out.tools == [] and "read_file" in out.system[-1].text
    assert "<tool_call>" in out.system[-1].text and '"path"' in out.system[-1].text
    assistant, result = out.messages[1], out.messages[2]
    assert assistant.role == "assistant" and not assistant.tool_calls
    assert assistant.content.startswith("Reading.\n<tool_call>")
    body = assistant.content.split("<tool_call>")[1].split("</tool_call>")[0]
    assert json.loads(body) == {"name": "read_file", "arguments": {"path": "app.py"}}
    assert result.role == "user" and 'id="c1"' in result.content
    assert "def answer()" in result.content
    assert text_request(ChatRequest(model="m", max_tokens=5)).system == []  # no tools: as is


def test_parser_splits_text_and_calls_across_any_chunk_boundary() -> None:
    reply = (
        'Let me look.<tool_call>{"name": "read_file", "arguments": {"path": "a.py"}}</tool_call> ok'
    )
    for size in (1, 2, 3, 7, len(reply)):
        parser = TextCallParser(names=frozenset({"read_file"}))
        shown = "".join(parser.feed(reply[i : i + size]) for i in range(0, len(reply), size))
        shown += parser.finish()
        assert shown == "Let me look. ok", (size, shown)
        [call] = parser.calls
        assert call.name == "read_file" and json.loads(call.arguments) == {"path": "a.py"}


def test_blocks_that_do_not_parse_or_name_unknown_tools_stay_visible_text() -> None:
    parser = TextCallParser(names=frozenset({"read_file"}))
    bad = '<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call><tool_call>{oops</tool_call>'
    shown = parser.feed(bad) + parser.feed("<tool_call>unclosed") + parser.finish()
    assert parser.calls == []
    assert "rm_rf" in shown and "{oops" in shown and shown.endswith("<tool_call>unclosed")


async def test_the_wrapped_stream_yields_calls_and_a_tool_use_stop() -> None:
    seen: list[ChatRequest] = []

    async def server(req: ChatRequest) -> AsyncGenerator[ProviderEvent, None]:
        seen.append(req)
        for piece in (
            "Sure.<tool_",
            'call>{"name":"read_file","arguments":{"path":"x"}}',
            "</tool_call>",
        ):
            yield TextDelta(text=piece)
        yield StreamDone(stop_reason="end_turn")

    events = [e async for e in text_tools(server)(request(Message(role="user", content="hi")))]
    assert seen[0].tools == []
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Sure."
    [done] = [e for e in events if isinstance(e, ToolCallDone)]
    assert done.call.name == "read_file" and done.call.id.startswith("call_text_")
    assert isinstance(events[-1], StreamDone) and events[-1].stop_reason == "tool_use"
