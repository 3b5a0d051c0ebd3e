"""TokenCounter: OpenAI framing, tools, request confidence, the per-hash cache."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from bonsai.domain import Message, ToolCall
from bonsai.services.tokens import TokenCounter, estimator_for
from bonsai.services.tokens.estimators import CharRatioEstimator, TiktokenEstimator
from bonsai.services.tokens.offline_tiktoken import load_encoding
from bonsai.settings import ModelInfo

BASH_TOOL = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run a shell command",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string", "description": "the command"}},
            "required": ["command"],
        },
    },
}


@pytest.fixture
def gpt4o(rank_cache: Path) -> TokenCounter:
    return estimator_for(
        ModelInfo(family="openai"), cache_dir=rank_cache, tokenizer_path=None, model="gpt-4o"
    )


def test_text_counts_are_exact_tiktoken_counts(gpt4o: TokenCounter) -> None:
    count = gpt4o.count_text("The quick brown fox jumps over the lazy dog.")
    assert (count.tokens, count.confidence, count.image_tokens) == (10, "exact", 0)
    assert gpt4o.count_text("<|endoftext|>").tokens == 7  # special tokens count as text
    assert gpt4o.degraded_reason is None


def test_message_framing_follows_openais_documented_rule(gpt4o: TokenCounter) -> None:
    plain = gpt4o.count_message(Message(role="user", content="hello world"))
    assert (plain.tokens, plain.confidence) == (3 + 1 + 2, "exact")
    named = gpt4o.count_message(Message(role="user", content="hello world", name="Alice"))
    assert named.tokens == plain.tokens + 1 + 1  # tokens_per_name + "Alice"


def test_request_adds_reply_priming_and_stays_exact_without_tools(gpt4o: TokenCounter) -> None:
    system = Message(role="system", content="You are terse.")
    user = Message(role="user", content="hello world")
    request = gpt4o.count_request([system, user])
    parts = gpt4o.count_message(system).tokens + gpt4o.count_message(user).tokens
    assert (request.tokens, request.confidence) == (parts + 3, "exact")


def test_tools_and_tool_calls_lower_the_request_to_high(gpt4o: TokenCounter) -> None:
    tools = gpt4o.count_tools([BASH_TOOL])
    assert tools.confidence == "high"
    assert 20 < tools.tokens < 80
    call = ToolCall(id="c1", name="bash", arguments='{"command":"ls -F"}')
    assistant = Message(role="assistant", tool_calls=(call,))
    result = Message(role="tool", content="README.md\nsrc/", tool_call_id="c1")
    user = Message(role="user", content="list files")
    assert gpt4o.count_request([user]).confidence == "exact"
    assert gpt4o.count_request([user], [BASH_TOOL]).confidence == "high"
    assert gpt4o.count_request([user, assistant, result]).confidence == "high"
    assert gpt4o.count_tools([]).tokens == 0


def test_bad_tool_definitions_are_clear_errors(gpt4o: TokenCounter) -> None:
    with pytest.raises(ValueError, match="tool #1 has no name"):
        gpt4o.count_tools([BASH_TOOL, {"type": "function", "function": {"description": "x"}}])


def test_anthropic_shaped_tools_are_counted_too(gpt4o: TokenCounter) -> None:
    anthropic_tool = {
        "name": "bash",
        "description": "Run a shell command",
        "input_schema": BASH_TOOL["function"]["parameters"],  # type: ignore[index]
    }
    assert gpt4o.count_tools([anthropic_tool]) == gpt4o.count_tools([BASH_TOOL])


def test_second_count_of_the_same_message_skips_the_encoder(gpt4o: TokenCounter) -> None:
    message = Message(role="user", content="a long tool output " * 200)
    first = gpt4o.count_message(message)
    calls = gpt4o.stats().encoder_calls
    twin = Message(role="user", content="a long tool output " * 200)  # equal content, new object
    assert gpt4o.count_message(twin) == first
    stats = gpt4o.stats()
    assert stats.encoder_calls == calls
    assert (stats.cache.hits, stats.cache.misses) == (1, 1)
    gpt4o.count_message(Message(role="assistant", content=message.content))  # role changes count
    assert gpt4o.stats().cache.misses == 2


def test_cache_is_bounded_and_evicts_the_least_recent(rank_cache: Path) -> None:
    counter = TokenCounter(
        TiktokenEstimator(load_encoding("o200k_base", rank_cache)), family="openai", cache_size=2
    )
    a, b, c = (Message(role="user", content=t) for t in ("alpha", "beta", "gamma"))
    for message in (a, b, a, c):  # a was used after b, so b goes
        counter.count_message(message)
    stats = counter.stats().cache
    assert (stats.size, stats.evictions, stats.max_size) == (2, 1, 2)
    counter.count_message(a)
    assert counter.stats().cache.hits == 2
    counter.count_message(b)
    assert counter.stats().cache.misses == 4


def test_chars_per_4_fallback_is_low_confidence() -> None:
    counter = estimator_for(
        ModelInfo(family="other"), cache_dir=Path("/nonexistent"), tokenizer_path=None
    )
    assert counter.name == "chars/4"
    assert counter.count_text("abcdefgh") == counter.count_text("abcdefgh")
    assert (counter.count_text("abcdefgh").tokens, counter.count_text("abcdefghi").tokens) == (2, 3)
    assert counter.count_text("abcdefgh").confidence == "low"
    assert counter.count_message(Message(role="user", content="abcdefgh")).tokens == 4 + 2
    assert counter.count_request([Message(role="user", content="x")]).confidence == "low"


def test_ratio_estimator_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="chars_per_token must be > 0"):
        CharRatioEstimator(0)


def test_text_counts_are_cached_too(gpt4o: TokenCounter) -> None:
    gpt4o.count_text("cache me")
    calls = gpt4o.stats().encoder_calls
    assert gpt4o.count_text("cache me").tokens == 2
    assert gpt4o.stats().encoder_calls == calls


def test_counter_gives_the_same_counts_from_many_threads(rank_cache: Path) -> None:
    counter = TokenCounter(
        TiktokenEstimator(load_encoding("o200k_base", rank_cache)), family="openai", cache_size=64
    )
    messages = [Message(role="user", content=f"message number {i} " * (i + 1)) for i in range(100)]
    expected = [counter.count_message(m).tokens for m in messages]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(
            pool.map(lambda _: [counter.count_message(m).tokens for m in messages], range(4))
        )
    assert results == [expected] * 4
    stats = counter.stats().cache
    assert stats.hits + stats.misses == 500
    assert stats.size == 64
