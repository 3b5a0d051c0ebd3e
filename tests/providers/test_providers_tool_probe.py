"""The pieces of the tool probe and of whole (non-streamed) replies that do not
need a server (the real servers are in tests/real_server/test_real_tools.py)."""

from __future__ import annotations

from bonsai.services.providers.discovery import parse_models, parse_props
from bonsai.services.providers.openai_stream import decode_openai_reply
from bonsai.services.providers.tool_probe import chunk_verdict, probe_body
from bonsai.services.providers.types import StreamDone, TextDelta, ToolCallDone, UsageReport


def test_a_probe_chunk_decides_on_a_call_or_visible_text_only() -> None:
    role = {"choices": [{"delta": {"role": "assistant", "content": None, "tool_calls": None}}]}
    blank = {"choices": [{"delta": {"content": "\n "}}]}
    call = {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"name": "ping"}}]}}]}
    text = {"choices": [{"delta": {"content": "The ping tool is"}}]}
    assert chunk_verdict(role) is None and chunk_verdict(blank) is None
    assert chunk_verdict({"choices": []}) is None and chunk_verdict("garbage") is None
    assert chunk_verdict(call) == "call" and chunk_verdict(text) == "text"


def test_the_probe_request_is_small_and_greedy() -> None:
    body = probe_body("m", "required")
    assert body["tool_choice"] == "required" and body["stream"] is True
    assert body["max_tokens"] <= 32 and body["temperature"] == 0
    assert [t["function"]["name"] for t in body["tools"]] == ["ping"]


def test_a_whole_reply_gives_the_events_a_stream_gives() -> None:
    reply = {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 40, "completion_tokens": 9},
    }
    events = decode_openai_reply(reply, "test")
    done = [e for e in events if isinstance(e, ToolCallDone)]
    assert [(d.call.id, d.call.name, d.call.arguments) for d in done] == [
        ("call_1", "read_file", '{"path": "a.py"}')
    ]
    assert any(isinstance(e, UsageReport) and e.input_tokens == 40 for e in events)
    assert events[-1] == StreamDone(stop_reason="tool_use")
    text = decode_openai_reply(
        {"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}]}, "test"
    )
    assert text[0] == TextDelta(text="hi") and text[-1] == StreamDone(stop_reason="end_turn")


def test_an_old_llama_server_without_caps_is_judged_by_its_template() -> None:
    plain = "{% for message in messages %}<|im_start|>{{ message['content'] }}{% endfor %}"
    tooled = "{% if tools %}{{ tools | tojson }}{% endif %}" + plain
    assert parse_props({"chat_template": plain}).tools is False
    assert parse_props({"chat_template": tooled}).tools is True
    caps = {"chat_template": tooled, "chat_template_caps": {"supports_tool_calls": False}}
    assert parse_props(caps).tools is False, "caps, when published, win over the template"


def test_the_one_model_a_server_lists_is_known_by_name() -> None:
    one = {"object": "list", "data": [{"id": "smollm2-135m", "owned_by": "me"}]}
    two = {"data": [{"id": "a"}, {"id": "b"}]}
    assert parse_models(one, "gpt-4o-mini").served_model == "smollm2-135m"
    assert parse_models(two, "gpt-4o-mini").served_model is None, "several: the user picks"
