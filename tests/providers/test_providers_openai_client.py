"""The Chat Completions client against the simulator: streaming, tool calls,
usage and prefix caching, and the bodies the server actually received."""

from __future__ import annotations

from provider_helpers import MakeProvider, collect, of_type, request, text_of

from bonsai.domain import Message, ToolCall
from bonsai.services.providers import SystemBlock, ToolSpec, UsageReport
from bonsai.sim import Reply, Script, Simulator, ToolCallSpec

LONG_SYSTEM = [SystemBlock(text="Follow the project rules carefully. " * 300, cache=True)]
READ = ToolSpec(
    name="read_file", parameters={"type": "object", "properties": {"path": {"type": "string"}}}
)


def openai_round(tokens: int) -> int:
    return 0 if tokens < 1024 else 1024 + (tokens - 1024) // 128 * 128


async def test_text_streams_in_pieces_and_ends_with_usage_then_done(
    sim: Simulator, make: MakeProvider
) -> None:
    sim.set_script(Script(steps=[Reply(text="Hello there, how can I help?")]))
    events = await collect(make(), request("gpt-4o-mini"))
    assert text_of(events) == "Hello there, how can I help?"
    assert len(of_type(events, "text_delta")) > 1
    assert [e.type for e in events[-2:]] == ["usage", "done"]
    assert events[-1].stop_reason == "end_turn"
    assert events[-2].output_tokens > 0 and events[-2].input_tokens > 0


async def test_parallel_tool_calls_arrive_complete_and_in_order(
    sim: Simulator, make: MakeProvider
) -> None:
    calls = [
        ToolCallSpec(name="read_file", arguments={"path": "src/a_long_module_name.py"}),
        ToolCallSpec(name="read_file", arguments={"path": "b.py"}),
    ]
    sim.set_script(Script(steps=[Reply(text="Reading.", tool_calls=calls)]))
    events = await collect(make(), request("gpt-4o-mini", tools=[READ]))
    started = of_type(events, "tool_call_started")
    done = [e.call for e in of_type(events, "tool_call_done")]
    assert [(s.index, s.name) for s in started] == [(0, "read_file"), (1, "read_file")]
    assert [c.arguments for c in done] == [
        '{"path":"src/a_long_module_name.py"}',
        '{"path":"b.py"}',
    ]
    assert len(of_type(events, "tool_call_args_delta")) > 2  # long arguments arrive in pieces
    assert events[-1].stop_reason == "tool_use"
    assert done[0].id != done[1].id


async def test_second_request_with_the_same_prefix_is_billed_as_cached(make: MakeProvider) -> None:
    provider = make()
    first_req = request("gpt-4o-mini", system=LONG_SYSTEM)
    first = of_type(await collect(provider, first_req), "usage")[0]
    assert first.input_tokens > 1300 and first.cached_input_tokens == 0
    follow_up = first_req.model_copy(
        update={
            "messages": [
                *first_req.messages,
                Message(role="assistant", content="Hi"),
                Message(role="user", content="go"),
            ]
        }
    )
    second = of_type(await collect(provider, follow_up), "usage")[0]
    assert second.input_tokens > first.input_tokens
    assert second.cached_input_tokens == openai_round(first.input_tokens)
    assert second.cached_input_tokens % 128 == 0 and second.cache_creation_tokens == 0


async def test_short_prompts_are_never_cached(make: MakeProvider) -> None:
    provider = make()
    for _ in range(2):
        usage = of_type(await collect(provider, request("gpt-4o-mini")), "usage")[0]
        assert usage.cached_input_tokens == 0


async def test_deepseek_usage_uses_its_own_fields_and_64_token_units(
    sim: Simulator, make: MakeProvider
) -> None:
    provider = make("deepseek", model="deepseek-chat")
    req = request("deepseek-chat", system=LONG_SYSTEM)
    first = of_type(await collect(provider, req), "usage")[0]
    again = of_type(await collect(provider, req), "usage")[0]
    assert again.cached_input_tokens == first.input_tokens // 64 * 64
    usage = sim.requests[-1].usage
    assert usage is not None and usage["cached"] == again.cached_input_tokens
    assert sim.requests[-1].body["max_tokens"] == 256


async def test_multi_turn_tool_conversation_is_accepted_by_a_strict_server(
    sim: Simulator, make: MakeProvider
) -> None:
    call = ToolCall(id="call_1", name="read_file", arguments='{"path":"a.py"}')
    conversation = [
        Message(role="user", content="open a.py"),
        Message(role="assistant", tool_calls=(call,)),
        Message(role="tool", tool_call_id="call_1", content="print('hi')"),
    ]
    events = await collect(
        make("openai"), request("gpt-4o", *conversation, tools=[READ], system=LONG_SYSTEM)
    )
    assert "tool result" in text_of(events)  # the simulator's echo of a tool message
    body = sim.requests[-1].body
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "tool"]
    assert body["messages"][2]["tool_calls"][0]["function"] == {
        "name": "read_file",
        "arguments": '{"path":"a.py"}',
    }
    assert body["messages"][3]["tool_call_id"] == "call_1"
    assert body["tools"][0]["type"] == "function" and body["stream_options"] == {
        "include_usage": True
    }
    assert body["max_completion_tokens"] == 256 and "max_tokens" not in body


async def test_openai_sends_a_bearer_key_and_sim_needs_none(
    sim: Simulator, make: MakeProvider
) -> None:
    sim.set_script(Script(require_api_key="key-for-openai"))
    usage = of_type(
        await collect(make("openai", env={"OPENAI_API_KEY": "key-for-openai"}), request("gpt-4o")),
        "usage",
    )
    assert usage and sim.requests[-1].headers["authorization"].startswith("<redacted")
    sim.set_script(Script())
    await collect(make("sim", env={}), request("gpt-4o-mini"))
    assert "authorization" not in sim.requests[-1].headers


async def test_usage_event_matches_what_the_server_billed(
    sim: Simulator, make: MakeProvider
) -> None:
    events = await collect(make(), request("gpt-4o-mini", system=LONG_SYSTEM))
    billed = sim.requests[-1].usage
    assert billed is not None
    assert events[-2] == UsageReport(
        input_tokens=billed["prompt"],
        output_tokens=billed["completion"],
        cached_input_tokens=billed["cached"],
    )
