"""Anthropic: an injected count_tokens callable, its cache, and the estimate without it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bonsai.domain import Message, ToolCall
from bonsai.services.tokens import Calibrator, TokenCounter, anthropic_payload, estimator_for
from bonsai.settings import ModelInfo

NOWHERE = Path("/nonexistent")
CONVERSATION = [
    Message(role="system", content="You are a careful engineer."),
    Message(role="user", content="Fix the failing test in tests/test_io.py please."),
]


class RecordingCountTokens:
    """An in-process stand-in for the HTTP client: answers from the payload size."""

    def __init__(self, fail: bool = False) -> None:
        self.payloads: list[dict[str, Any]] = []
        self.fail = fail

    async def __call__(self, payload: dict[str, Any]) -> int:
        self.payloads.append(payload)
        if self.fail:
            raise ConnectionError("connection refused")
        return len(json.dumps(payload)) // 3


def _claude(api: RecordingCountTokens | None, **kwargs: Any) -> TokenCounter:
    return estimator_for(
        ModelInfo(family="anthropic"),
        cache_dir=NOWHERE,
        tokenizer_path=None,
        count_tokens_api=api,
        model="claude-sonnet-4-5",
        **kwargs,
    )


async def test_api_count_is_exact_and_cached_by_content_hash() -> None:
    api = RecordingCountTokens()
    counter = _claude(api)
    first = await counter.acount_request(CONVERSATION)
    second = await counter.acount_request(list(CONVERSATION))
    assert first == second
    assert (first.tokens, first.confidence) == (len(json.dumps(api.payloads[0])) // 3, "exact")
    assert len(api.payloads) == 1
    assert counter.stats().api_calls == 1
    await counter.acount_request([*CONVERSATION, Message(role="assistant", content="On it.")])
    assert len(api.payloads) == 2
    assert counter.degraded_reason is None


async def test_persistent_store_spares_the_api_after_a_restart() -> None:
    store: dict[str, int] = {}
    api = RecordingCountTokens()
    before = await _claude(api, api_store=store).acount_request(CONVERSATION)
    after = await _claude(api, api_store=store).acount_request(CONVERSATION)
    assert before == after
    assert len(api.payloads) == 1
    assert list(store.values()) == [before.tokens]


async def test_api_answers_calibrate_the_local_estimate() -> None:
    calibrator = Calibrator()
    counter = _claude(RecordingCountTokens(), calibrator=calibrator)
    message = CONVERSATION[1]
    before = counter.count_message(message)
    await counter.acount_request(CONVERSATION)
    after = counter.count_message(message)
    assert calibrator.snapshot("claude-sonnet-4-5").samples == 1
    assert after.raw_tokens == before.tokens
    assert after.tokens != before.tokens


async def test_failing_api_falls_back_to_the_estimate_and_says_so() -> None:
    api = RecordingCountTokens(fail=True)
    counter = _claude(api)
    count = await counter.acount_request(CONVERSATION)
    assert count == counter.count_request(CONVERSATION)
    assert count.confidence == "low"
    assert counter.degraded_reason is not None
    assert "count_tokens API failed (connection refused)" in counter.degraded_reason
    api.fail = False
    assert (await counter.acount_request(CONVERSATION)).confidence == "exact"
    assert counter.degraded_reason is None


async def test_without_api_the_estimate_is_chars_per_3_5_and_degraded() -> None:
    counter = _claude(None)
    assert counter.name == "chars/3.5"
    assert counter.count_text("x" * 35).tokens == 10
    assert counter.count_text("x" * 35).confidence == "low"
    assert counter.degraded_reason is not None
    assert "no count_tokens API configured" in counter.degraded_reason
    assert await counter.acount_request(CONVERSATION) == counter.count_request(CONVERSATION)


def test_payload_has_anthropics_shape() -> None:
    call = ToolCall(id="toolu_1", name="bash", arguments='{"command": "ls"}')
    messages = [
        *CONVERSATION,
        Message(role="assistant", content="Listing.", tool_calls=(call,)),
        Message(role="tool", content="a.py", tool_call_id="toolu_1"),
        Message(role="user", content="and now?"),
    ]
    tool = {"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}
    payload = anthropic_payload("claude-x", messages, [tool])
    assert payload["system"] == "You are a careful engineer."
    assert [turn["role"] for turn in payload["messages"]] == ["user", "assistant", "user"]
    assistant_blocks = payload["messages"][1]["content"]
    assert assistant_blocks[1] == {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "bash",
        "input": {"command": "ls"},
    }
    last = payload["messages"][2]["content"]
    assert last[0] == {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.py"}
    assert last[1] == {"type": "text", "text": "and now?"}
    assert payload["tools"] == [{"name": "bash", "input_schema": {"type": "object"}}]


def test_api_without_a_model_name_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="needs the model name"):
        estimator_for(
            ModelInfo(family="anthropic"),
            cache_dir=NOWHERE,
            tokenizer_path=None,
            count_tokens_api=RecordingCountTokens(),
        )
