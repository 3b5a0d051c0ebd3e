"""The Anthropic Messages client against the simulator: streaming, tool use,
cache reads and writes at breakpoints, count_tokens, and the received body."""

from __future__ import annotations

from provider_helpers import MakeProvider, collect, of_type, request, text_of

from bonsai.domain import Message, ToolCall
from bonsai.services.providers import AnthropicProvider, SystemBlock, ToolSpec
from bonsai.sim import Reply, Script, Simulator, ToolCallSpec

RULES = SystemBlock(text="Follow the project rules carefully. " * 300, cache=True)
TAIL = SystemBlock(text="## Volatile state\nbranch main, clean")
READ = ToolSpec(
    name="read_file", parameters={"type": "object", "properties": {"path": {"type": "string"}}}
)


async def test_text_streams_and_stop_reason_is_reported(sim: Simulator, make: MakeProvider) -> None:
    sim.set_script(Script(steps=[Reply(text="Sure, here it is.")]))
    events = await collect(make("anthropic"), request("claude-sonnet-4-5"))
    assert text_of(events) == "Sure, here it is."
    assert [e.type for e in events[-2:]] == ["usage", "done"]
    assert events[-1].stop_reason == "end_turn"


async def test_parallel_tool_use_blocks_become_complete_calls(
    sim: Simulator, make: MakeProvider
) -> None:
    calls = [
        ToolCallSpec(name="read_file", arguments={"path": "one/two/three.py"}, id="toolu_A"),
        ToolCallSpec(name="read_file", arguments={"path": "b.py"}, id="toolu_B"),
    ]
    sim.set_script(Script(steps=[Reply(text="Let me look.", tool_calls=calls)]))
    events = await collect(make("anthropic"), request("claude-sonnet-4-5", tools=[READ]))
    assert text_of(events) == "Let me look."
    done = [e.call for e in of_type(events, "tool_call_done")]
    assert [(c.id, c.arguments) for c in done] == [
        ("toolu_A", '{"path":"one/two/three.py"}'),
        ("toolu_B", '{"path":"b.py"}'),
    ]
    assert [s.index for s in of_type(events, "tool_call_started")] == [0, 1]
    assert events[-1].stop_reason == "tool_use"


async def test_cache_is_written_then_read_at_the_breakpoints(make: MakeProvider) -> None:
    provider = make("anthropic")
    first_req = request("claude-sonnet-4-5", system=[RULES, TAIL])
    first = of_type(await collect(provider, first_req), "usage")[0]
    assert first.cached_input_tokens == 0
    assert 1024 <= first.cache_creation_tokens < first.input_tokens
    more = [
        *first_req.messages,
        Message(role="assistant", content="Hi!"),
        Message(role="user", content="next"),
    ]
    second = of_type(
        await collect(provider, first_req.model_copy(update={"messages": more})), "usage"
    )[0]
    # everything the first call wrote (up to its last-message breakpoint) is read back
    assert second.cached_input_tokens == first.cache_creation_tokens
    assert 0 < second.cache_creation_tokens < 20  # only the new turn is written
    assert second.input_tokens > first.input_tokens


async def test_without_breakpoints_nothing_is_cached(make: MakeProvider) -> None:
    provider = make("anthropic")
    req = request(
        "claude-sonnet-4-5",
        system=[RULES.model_copy(update={"cache": False})],
        cache_last_message=False,
    )
    for _ in range(2):
        usage = of_type(await collect(provider, req), "usage")[0]
        assert (usage.cached_input_tokens, usage.cache_creation_tokens) == (0, 0)


async def test_received_body_follows_the_messages_api(sim: Simulator, make: MakeProvider) -> None:
    call = ToolCall(id="toolu_1", name="read_file", arguments='{"path":"a.py"}')
    conversation = [
        Message(role="user", content="open a.py"),
        Message(role="assistant", content="Opening.", tool_calls=(call,)),
        Message(role="tool", tool_call_id="toolu_1", content="print('hi')"),
    ]
    events = await collect(
        make("anthropic"),
        request("claude-sonnet-4-5", *conversation, system=[RULES, TAIL], tools=[READ]),
    )
    assert "tool result" in text_of(events)
    received = sim.requests[-1]
    assert received.headers["anthropic-version"] == "2023-06-01"
    assert received.headers["x-api-key"].startswith("<redacted")
    body = received.body
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in body["system"][1]
    assert body["tools"] == [
        {"name": "read_file", "description": "", "input_schema": READ.parameters}
    ]
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][1]["content"][1] == {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "read_file",
        "input": {"path": "a.py"},
    }
    last = body["messages"][2]["content"][-1]
    assert last["type"] == "tool_result" and last["cache_control"] == {"type": "ephemeral"}


async def test_count_tokens_matches_the_prompt_the_server_bills(
    sim: Simulator, make: MakeProvider
) -> None:
    provider = make("anthropic")
    assert isinstance(provider, AnthropicProvider)
    req = request("claude-sonnet-4-5", system=[RULES])
    counted = await provider.count_tokens(req)
    usage = of_type(await collect(provider, req), "usage")[0]
    assert counted == usage.input_tokens > 1000
    assert sim.requests[0].route == "count_tokens" and "max_tokens" not in sim.requests[0].body


async def test_count_tokens_accepts_a_ready_made_body(make: MakeProvider) -> None:
    provider = make("anthropic")
    assert isinstance(provider, AnthropicProvider)
    body = {
        "model": "claude-sonnet-4-5",
        "system": "be brief",
        "messages": [{"role": "user", "content": "hello there"}],
    }
    assert 3 < await provider.count_tokens_body(body) < 30
