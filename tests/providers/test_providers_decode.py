"""Stream decoders on hand-written wire events: the cases a simulator that
streams calls one after another would not produce (interleaving, odd servers)."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from provider_helpers import of_type, text_of

from bonsai.services.providers import ProviderError, ProviderEvent, UsageReport
from bonsai.services.providers.anthropic_stream import decode_anthropic
from bonsai.services.providers.openai_stream import decode_openai, openai_usage
from bonsai.services.providers.sse import SseEvent


async def feed(*items: Any) -> AsyncGenerator[SseEvent, None]:
    for item in items:
        yield SseEvent("message", item if isinstance(item, str) else json.dumps(item))


def chunk(
    delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any
) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {"choices": choices, **extra}


def tool_part(
    index: int, args: str, *, call_id: str | None = None, name: str | None = None
) -> dict[str, Any]:
    part: dict[str, Any] = {"index": index, "function": {"arguments": args}}
    if call_id:
        part["id"] = call_id
        part["function"]["name"] = name
    return chunk({"tool_calls": [part]})


async def run_openai(*items: Any, require_done: bool = True) -> list[ProviderEvent]:
    return [e async for e in decode_openai(feed(*items), "srv", require_done=require_done)]


async def test_interleaved_parallel_tool_calls_are_kept_apart() -> None:
    events = await run_openai(
        tool_part(0, '{"a"', call_id="x", name="one"),
        tool_part(1, '{"b"', call_id="y", name="two"),
        tool_part(0, ":1}"),
        tool_part(1, ":2}"),
        chunk({}, "tool_calls"),
        "[DONE]",
    )
    done = [e.call for e in of_type(events, "tool_call_done")]
    assert [(c.id, c.name, c.arguments) for c in done] == [
        ("x", "one", '{"a":1}'),
        ("y", "two", '{"b":2}'),
    ]
    assert events[-1].stop_reason == "tool_use"


async def test_a_server_reusing_index_zero_for_each_call_still_gives_two_calls() -> None:
    events = await run_openai(
        tool_part(0, "{}", call_id="x", name="one"),
        tool_part(0, "{}", call_id="y", name="two"),
        chunk({}, "tool_calls"),
        "[DONE]",
    )
    assert [e.index for e in of_type(events, "tool_call_started")] == [0, 1]


async def test_usage_is_reported_once_before_done_with_normalised_stop_reason() -> None:
    usage = {
        "prompt_tokens": 2000,
        "completion_tokens": 9,
        "prompt_tokens_details": {"cached_tokens": 1152},
    }
    events = await run_openai(
        chunk({"content": "hi"}), chunk({}, "length"), chunk(None, usage=usage), "[DONE]"
    )
    assert text_of(events) == "hi"
    assert events[-2] == UsageReport(input_tokens=2000, output_tokens=9, cached_input_tokens=1152)
    assert events[-1].stop_reason == "max_tokens"


def test_deepseek_usage_fields_are_understood() -> None:
    report = openai_usage(
        {"prompt_cache_hit_tokens": 640, "prompt_cache_miss_tokens": 100, "completion_tokens": 3},
        "ds",
    )
    assert (report.input_tokens, report.cached_input_tokens) == (740, 640)


def test_usage_with_nonsense_counts_is_malformed() -> None:
    with pytest.raises(ProviderError, match="prompt_tokens"):
        openai_usage({"prompt_tokens": "many"}, "srv")


async def test_end_without_done_is_a_broken_stream_unless_the_server_is_lenient() -> None:
    with pytest.raises(ProviderError) as info:
        await run_openai(chunk({"content": "hi"}), chunk({}, "stop"))
    assert info.value.kind == "broken_stream" and "[DONE]" in info.value.message
    events = await run_openai(chunk({"content": "hi"}), chunk({}, "stop"), require_done=False)
    assert events[-1].stop_reason == "end_turn"
    with pytest.raises(ProviderError, match="without a finish_reason"):
        await run_openai(chunk({"content": "hi"}), require_done=False)


async def test_error_object_mid_stream_becomes_a_server_error() -> None:
    with pytest.raises(ProviderError) as info:
        await run_openai(chunk({"content": "a"}), {"error": {"message": "model crashed"}})
    assert info.value.kind == "server" and "model crashed" in info.value.message


def ant(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, **fields}


START = ant(
    "message_start",
    message={
        "usage": {
            "input_tokens": 10,
            "cache_read_input_tokens": 2048,
            "cache_creation_input_tokens": 300,
            "output_tokens": 1,
        }
    },
)


async def run_anthropic(*items: Any) -> list[ProviderEvent]:
    return [e async for e in decode_anthropic(feed(*items), "ant")]


async def test_anthropic_usage_sums_the_three_way_split() -> None:
    events = await run_anthropic(
        START,
        ant("ping"),
        ant("content_block_start", index=0, content_block={"type": "thinking", "thinking": ""}),
        ant("content_block_delta", index=0, delta={"type": "thinking_delta", "thinking": "hmm"}),
        ant("content_block_stop", index=0),
        ant("content_block_start", index=1, content_block={"type": "text", "text": ""}),
        ant("content_block_delta", index=1, delta={"type": "text_delta", "text": "Hi"}),
        ant("content_block_stop", index=1),
        ant("message_delta", delta={"stop_reason": "end_turn"}, usage={"output_tokens": 12}),
        ant("some_future_event"),
        ant("message_stop"),
    )
    assert text_of(events) == "Hi"  # thinking is not surfaced
    assert events[-2] == UsageReport(
        input_tokens=2358, output_tokens=12, cached_input_tokens=2048, cache_creation_tokens=300
    )
    assert events[-1].stop_reason == "end_turn"


async def test_anthropic_tool_use_without_input_gets_empty_object_arguments() -> None:
    events = await run_anthropic(
        START,
        ant(
            "content_block_start",
            index=0,
            content_block={"type": "tool_use", "id": "t1", "name": "ls", "input": {}},
        ),
        ant("content_block_delta", index=0, delta={"type": "input_json_delta", "partial_json": ""}),
        ant("content_block_stop", index=0),
        ant("message_delta", delta={"stop_reason": "tool_use"}, usage={"output_tokens": 5}),
        ant("message_stop"),
    )
    assert of_type(events, "tool_call_done")[0].call.arguments == "{}"
    assert of_type(events, "tool_call_args_delta") == []


@pytest.mark.parametrize(
    ("etype", "kind"),
    [
        ("overloaded_error", "server"),
        ("rate_limit_error", "rate_limit"),
        ("invalid_request_error", "bad_request"),
    ],
)
async def test_anthropic_error_event_maps_to_a_kind(etype: str, kind: str) -> None:
    with pytest.raises(ProviderError) as info:
        await run_anthropic(START, ant("error", error={"type": etype, "message": "Overloaded"}))
    assert info.value.kind == kind and "Overloaded" in info.value.message


async def test_anthropic_stream_without_message_stop_is_broken() -> None:
    with pytest.raises(ProviderError) as info:
        await run_anthropic(
            START, ant("content_block_start", index=0, content_block={"type": "text", "text": "a"})
        )
    assert info.value.kind == "broken_stream"


@pytest.mark.parametrize(
    "bad",
    [
        {"choices": [{"index": 0, "delta": "text"}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": "x"}]}}]},
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]},
                }
            ]
        },
        {"choices": "nope"},
        {"usage": {"prompt_tokens": -1}},
    ],
)
async def test_odd_openai_chunks_are_malformed_not_crashes(bad: dict[str, Any]) -> None:
    with pytest.raises(ProviderError) as info:
        await run_openai(bad, chunk({}, "stop"), "[DONE]")
    assert info.value.kind == "malformed"


async def test_odd_anthropic_delta_is_malformed() -> None:
    with pytest.raises(ProviderError) as info:
        await run_anthropic(START, ant("content_block_delta", index=0, delta="x"))
    assert info.value.kind == "malformed"
