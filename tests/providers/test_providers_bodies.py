"""Request bodies for both wires, built from provider-neutral requests."""

from __future__ import annotations

import json

import pytest

from bonsai.domain import Message, ToolCall
from bonsai.services.providers import ChatRequest, ProviderError, SystemBlock, ToolSpec
from bonsai.services.providers.anthropic_body import (
    build_anthropic_body,
    build_count_tokens_body,
)
from bonsai.services.providers.openai_body import build_openai_body

TOOL = ToolSpec(
    name="read_file",
    description="Read a file",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}},
)
CALLS = (
    ToolCall(id="c1", name="read_file", arguments='{"path":"a.py"}'),
    ToolCall(id="c2", name="read_file", arguments='{"path":"b.py"}'),
)
CONVERSATION = [
    Message(role="user", content="look at a.py and b.py"),
    Message(role="assistant", content="Reading both.", tool_calls=CALLS),
    Message(role="tool", tool_call_id="c1", content="print('a')"),
    Message(role="tool", tool_call_id="c2", content="", status="error"),
    Message(role="user", content="thanks"),
]


def req(**kw: object) -> ChatRequest:
    base: dict[str, object] = {
        "model": "m",
        "system": [SystemBlock(text="rules", cache=True), SystemBlock(text="volatile")],
        "messages": CONVERSATION,
        "tools": [TOOL],
        "max_tokens": 100,
    }
    return ChatRequest.model_validate(base | kw)


def test_openai_body_has_the_documented_shape() -> None:
    body = build_openai_body(req(temperature=0.2), "openai")
    assert body["model"] == "m" and body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_completion_tokens"] == 100 and "max_tokens" not in body
    assert body["temperature"] == 0.2
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "read_file",
                "description": "Read a file",
                "parameters": TOOL.parameters,
            },
        }
    ]
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "tool", "user"]
    assert body["messages"][0]["content"] == "rules\n\nvolatile"
    assistant = body["messages"][2]
    assert assistant["content"] == "Reading both."
    assert assistant["tool_calls"][1] == {
        "id": "c2",
        "type": "function",
        "function": {"name": "read_file", "arguments": '{"path":"b.py"}'},
    }
    assert body["messages"][3] == {"role": "tool", "tool_call_id": "c1", "content": "print('a')"}


@pytest.mark.parametrize(
    ("flavour", "key"), [("deepseek", "max_tokens"), ("openai-compatible", "max_tokens")]
)
def test_other_flavours_send_max_tokens(flavour: str, key: str) -> None:
    body = build_openai_body(req(), flavour)  # type: ignore[arg-type]
    assert body[key] == 100 and "max_completion_tokens" not in body


def test_openai_assistant_with_only_tool_calls_sends_null_content() -> None:
    msg = Message(role="assistant", tool_calls=CALLS[:1])
    body = build_openai_body(req(messages=[Message(role="user", content="x"), msg]), "openai")
    assert body["messages"][-1]["content"] is None


def test_openai_body_without_tools_or_system_omits_those_keys() -> None:
    body = build_openai_body(req(system=[], tools=[]), "openai")
    assert "tools" not in body and body["messages"][0]["role"] == "user"
    assert "temperature" not in body


def test_tool_message_without_id_is_a_clear_bad_request() -> None:
    broken = [Message(role="user", content="x"), Message(role="tool", content="out")]
    for build in (lambda r: build_openai_body(r, "openai"), build_anthropic_body):
        with pytest.raises(ProviderError) as info:
            build(req(messages=broken))
        assert info.value.kind == "bad_request" and "message 1" in info.value.message


def test_identical_requests_give_identical_bytes() -> None:
    a = json.dumps(build_anthropic_body(req()), separators=(",", ":"))
    b = json.dumps(build_anthropic_body(req()), separators=(",", ":"))
    assert a == b


def test_anthropic_body_has_the_documented_shape() -> None:
    body = build_anthropic_body(req())
    assert body["model"] == "m" and body["max_tokens"] == 100 and body["stream"] is True
    assert body["system"] == [
        {"type": "text", "text": "rules", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "volatile"},
    ]
    assert body["tools"] == [
        {"name": "read_file", "description": "Read a file", "input_schema": TOOL.parameters}
    ]
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "user"]  # two tool results + text merged
    assistant = body["messages"][1]["content"]
    assert assistant[0] == {"type": "text", "text": "Reading both."}
    assert assistant[1] == {
        "type": "tool_use",
        "id": "c1",
        "name": "read_file",
        "input": {"path": "a.py"},
    }


def test_anthropic_merges_tool_results_first_and_marks_errors() -> None:
    merged = build_anthropic_body(req())["messages"][2]["content"]
    assert [b["type"] for b in merged] == ["tool_result", "tool_result", "text"]
    assert merged[0] == {"type": "tool_result", "tool_use_id": "c1", "content": "print('a')"}
    assert merged[1] == {"type": "tool_result", "tool_use_id": "c2", "is_error": True}


def test_anthropic_cache_breakpoint_goes_on_the_last_block_only() -> None:
    body = build_anthropic_body(req())
    marked = [
        (i, j)
        for i, m in enumerate(body["messages"])
        for j, b in enumerate(m["content"])
        if "cache_control" in b
    ]
    assert marked == [(2, 2)]
    assert body["messages"][2]["content"][2]["cache_control"] == {"type": "ephemeral"}
    plain = build_anthropic_body(req(cache_last_message=False))
    assert not any("cache_control" in b for m in plain["messages"] for b in m["content"])


def test_more_than_four_breakpoints_is_refused_before_sending() -> None:
    blocks = [SystemBlock(text=f"b{i}", cache=True) for i in range(4)]
    with pytest.raises(ProviderError, match="5 cache breakpoints"):
        build_anthropic_body(req(system=blocks))


def test_anthropic_system_messages_in_the_conversation_become_user_text() -> None:
    msgs = [Message(role="user", content="a"), Message(role="system", content="note")]
    body = build_anthropic_body(req(messages=msgs, cache_last_message=False))
    assert body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "note"}],
        }
    ]


def test_unparsable_tool_arguments_stay_visible(caplog: pytest.LogCaptureFixture) -> None:
    bad = ToolCall(id="c9", name="x", arguments="{not json")
    msgs = [Message(role="user", content="a"), Message(role="assistant", tool_calls=(bad,))]
    body = build_anthropic_body(req(messages=msgs))
    assert body["messages"][1]["content"][0]["input"] == {"_raw_arguments": "{not json"}
    assert "c9" in caplog.text


def test_empty_messages_are_skipped_and_an_empty_request_is_refused() -> None:
    msgs = [Message(role="user", content="a"), Message(role="assistant", content="  ")]
    body = build_anthropic_body(req(messages=msgs))
    assert [m["role"] for m in body["messages"]] == ["user"]
    with pytest.raises(ProviderError, match="no message"):
        build_anthropic_body(req(messages=[Message(role="user", content="")]))


def test_count_tokens_body_has_prompt_fields_only() -> None:
    body = build_count_tokens_body(req())
    assert set(body) == {"model", "system", "messages", "tools"}
