"""Faithfulness: the official ``anthropic`` SDK talks to the simulator and
parses every response (streams, tool use, usage with cache fields, counting,
errors, model listing)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anthropic
import pytest

from bonsai.sim import Fault, Reply, Script, Simulator, ToolCallSpec

MODEL = "claude-sonnet-4-6"
SYSTEM: list[Any] = [
    {
        "type": "text",
        "text": "You are careful and terse. " * 300,
        "cache_control": {"type": "ephemeral"},
    }
]
TOOLS: list[Any] = [
    {
        "name": "read_file",
        "description": "Read a file",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
]
PARALLEL = Reply(
    text="Reading both.",
    tool_calls=[
        ToolCallSpec(name="read_file", arguments={"path": "src/bonsai/a_rather_long_name.py"}),
        ToolCallSpec(name="read_file", arguments={"path": "b.py"}),
    ],
)


@pytest.fixture
async def client(sim: Simulator) -> AsyncIterator[anthropic.AsyncAnthropic]:
    async with anthropic.AsyncAnthropic(
        base_url=sim.base_url, api_key="sk-ant-sim", max_retries=0
    ) as c:
        yield c


def user(text: str) -> list[Any]:
    return [{"role": "user", "content": text}]


async def test_streamed_text_and_final_usage(
    sim: Simulator, client: anthropic.AsyncAnthropic
) -> None:
    sim.set_script(Script(steps=[Reply(text="Streaming works fine.")]))
    async with client.messages.stream(
        model=MODEL, max_tokens=100, system=SYSTEM, messages=user("hi")
    ) as stream:
        text = "".join([t async for t in stream.text_stream])
        final = await stream.get_final_message()
    assert text == "Streaming works fine."
    assert final.stop_reason == "end_turn" and final.role == "assistant"
    usage = final.usage
    assert usage.cache_read_input_tokens == 0 and (usage.cache_creation_input_tokens or 0) > 1024
    assert (
        usage.input_tokens < 20 and usage.output_tokens > 1
    )  # the final output count, not the start's


async def test_streamed_parallel_tool_use_parses_inputs(
    sim: Simulator, client: anthropic.AsyncAnthropic
) -> None:
    sim.set_script(Script(steps=[PARALLEL]))
    async with client.messages.stream(
        model=MODEL, max_tokens=100, tools=TOOLS, messages=user("read")
    ) as stream:
        final = await stream.get_final_message()
    kinds = [b.type for b in final.content]
    assert kinds == ["text", "tool_use", "tool_use"] and final.stop_reason == "tool_use"
    inputs = [b.input for b in final.content if b.type == "tool_use"]
    assert inputs == [{"path": "src/bonsai/a_rather_long_name.py"}, {"path": "b.py"}]


async def test_non_streaming_message_and_cache_read_on_repeat(
    client: anthropic.AsyncAnthropic,
) -> None:
    first = await client.messages.create(
        model=MODEL, max_tokens=50, system=SYSTEM, messages=user("a")
    )
    second = await client.messages.create(
        model=MODEL, max_tokens=50, system=SYSTEM, messages=user("b")
    )
    assert first.type == "message" and first.content[0].type == "text"
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens
    assert second.usage.cache_creation_input_tokens == 0


async def test_tool_results_round_trip_and_count_tokens(client: anthropic.AsyncAnthropic) -> None:
    messages: list[Any] = [
        {"role": "user", "content": "read it"},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a"}}
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "data"}],
        },
    ]
    reply = await client.messages.create(model=MODEL, max_tokens=50, tools=TOOLS, messages=messages)
    assert reply.content[0].type == "text" and "tool result" in reply.content[0].text
    counted = await client.messages.count_tokens(model=MODEL, tools=TOOLS, messages=messages)
    assert counted.input_tokens == reply.usage.input_tokens


async def test_errors_map_to_the_sdks_exception_types(
    sim: Simulator, client: anthropic.AsyncAnthropic
) -> None:
    sim.set_script(Script(faults={1: Fault(kind="rate_limit", retry_after="3")}))
    with pytest.raises(anthropic.RateLimitError):
        await client.messages.create(model=MODEL, max_tokens=5, messages=user("x"))
    missing: list[Any] = [
        {"role": "user", "content": "x"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_9", "name": "read_file", "input": {}}],
        },
        {"role": "user", "content": "forgot the result"},
    ]
    with pytest.raises(anthropic.BadRequestError, match="toolu_9"):
        await client.messages.create(model=MODEL, max_tokens=5, messages=missing)
    sim.set_script(Script(faults={1: Fault(kind="server_error", status=529)}))
    with pytest.raises(anthropic.InternalServerError) as overloaded:
        await client.messages.create(model=MODEL, max_tokens=5, messages=user("x"))
    assert overloaded.value.status_code == 529
    sim.set_script(Script(require_api_key="other"))
    with pytest.raises(anthropic.AuthenticationError):
        await client.messages.create(model=MODEL, max_tokens=5, messages=user("x"))


async def test_model_listing_uses_the_anthropic_shape(client: anthropic.AsyncAnthropic) -> None:
    ids = [m.id async for m in client.models.list()]
    assert "claude-sonnet-4-6" in ids
