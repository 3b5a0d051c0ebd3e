"""Faithfulness: the official ``openai`` SDK talks to the simulator and parses
every response (streamed text and tool calls, plain JSON, usage, errors)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import openai
import pytest

from bonsai.sim import Fault, Reply, Script, Simulator, SimulatorThread, ToolCallSpec

SYSTEM = {"role": "system", "content": "You are careful and terse. " * 300}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
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
async def client(sim: Simulator) -> AsyncIterator[openai.AsyncOpenAI]:
    async with openai.AsyncOpenAI(
        base_url=sim.openai_base_url, api_key="sk-sim", max_retries=0
    ) as c:
        yield c


async def test_streamed_text_and_usage_parse(sim: Simulator, client: openai.AsyncOpenAI) -> None:
    sim.set_script(Script(steps=[Reply(text="Streaming works fine.")]))
    stream = await client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[SYSTEM, {"role": "user", "content": "hi"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = [chunk async for chunk in stream]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Streaming works fine."
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    usage = chunks[-1].usage
    assert usage is not None and not chunks[-1].choices
    assert usage.prompt_tokens > 1000 and usage.completion_tokens > 0
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert (
        usage.prompt_tokens_details is not None and usage.prompt_tokens_details.cached_tokens == 0
    )
    assert all(c.usage is None for c in chunks[:-1])


async def test_streamed_parallel_tool_calls_accumulate_in_the_sdk_helper(
    sim: Simulator, client: openai.AsyncOpenAI
) -> None:
    sim.set_script(Script(steps=[PARALLEL]))
    async with client.chat.completions.stream(
        model="gpt-4o",
        messages=[{"role": "user", "content": "read"}],
        tools=TOOLS,  # type: ignore[arg-type]
    ) as stream:
        final = await stream.get_final_completion()
    message = final.choices[0].message
    assert final.choices[0].finish_reason == "tool_calls" and message.content == "Reading both."
    calls = message.tool_calls or []
    assert [json.loads(c.function.arguments) for c in calls] == [  # type: ignore[union-attr]
        {"path": "src/bonsai/a_rather_long_name.py"},
        {"path": "b.py"},
    ]
    assert len({c.id for c in calls}) == 2


async def test_non_streaming_completion_parses_with_tool_calls_and_usage(
    sim: Simulator, client: openai.AsyncOpenAI
) -> None:
    sim.set_script(Script(steps=[PARALLEL]))
    done = await client.chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": "read"}], tools=TOOLS
    )  # type: ignore[arg-type]
    assert done.object == "chat.completion" and done.model == "gpt-4o"
    calls = done.choices[0].message.tool_calls or []
    assert [c.function.name for c in calls] == ["read_file", "read_file"]  # type: ignore[union-attr]
    assert done.usage is not None and done.usage.completion_tokens > 0


async def test_repeated_prefix_reports_cached_tokens_in_128_steps(
    client: openai.AsyncOpenAI,
) -> None:
    messages = [SYSTEM, {"role": "user", "content": "first"}]
    first = await client.chat.completions.create(model="gpt-4o-mini", messages=messages)  # type: ignore[arg-type]
    more = [*messages, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "again"}]
    second = await client.chat.completions.create(model="gpt-4o-mini", messages=more)  # type: ignore[arg-type]
    assert first.usage is not None and second.usage is not None
    cached = second.usage.prompt_tokens_details.cached_tokens  # type: ignore[union-attr]
    n = first.usage.prompt_tokens
    assert cached == 1024 + (n - 1024) // 128 * 128


async def test_deepseek_models_add_cache_hit_and_miss_fields(client: openai.AsyncOpenAI) -> None:
    messages = [SYSTEM, {"role": "user", "content": "x"}]
    await client.chat.completions.create(model="deepseek-chat", messages=messages)  # type: ignore[arg-type]
    again = await client.chat.completions.create(model="deepseek-chat", messages=messages)  # type: ignore[arg-type]
    assert again.usage is not None
    extra = again.usage.model_extra or {}
    assert (
        extra["prompt_cache_hit_tokens"] + extra["prompt_cache_miss_tokens"]
        == again.usage.prompt_tokens
    )
    assert extra["prompt_cache_hit_tokens"] % 64 == 0 and extra["prompt_cache_hit_tokens"] > 1000


async def test_errors_map_to_the_sdks_exception_types(
    sim: Simulator, client: openai.AsyncOpenAI
) -> None:
    sim.set_script(Script(faults={1: Fault(kind="rate_limit", retry_after="3")}))
    with pytest.raises(openai.RateLimitError) as limited:
        await client.chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "x"}]
        )
    assert limited.value.response.headers["retry-after"] == "3"
    with pytest.raises(openai.BadRequestError, match="must be a response to a preceding"):
        await client.chat.completions.create(
            model="gpt-4o", messages=[{"role": "tool", "tool_call_id": "x", "content": "out"}]
        )
    sim.set_script(Script(require_api_key="other"))
    with pytest.raises(openai.AuthenticationError):
        await client.chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "x"}]
        )


async def test_model_listing(client: openai.AsyncOpenAI) -> None:
    ids = [m.id async for m in client.models.list()]
    assert "gpt-4o-mini" in ids and "claude-sonnet-4-6" in ids


def test_sync_sdk_against_the_threaded_simulator() -> None:
    with SimulatorThread(Script(steps=[Reply(text="from a thread")])) as sim:
        client = openai.OpenAI(base_url=sim.openai_base_url, api_key="k", max_retries=0)
        done = client.chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "x"}]
        )
        assert done.choices[0].message.content == "from a thread"
        assert [r.outcome for r in sim.requests] == ["ok"]
        client.close()
