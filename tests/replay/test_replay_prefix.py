"""Cache-eligible prefixes: provider granularity and token-level matching."""

from __future__ import annotations

import pytest

from bonsai.domain import Message
from bonsai.services.replay import GRANULARITY, PrefixTracker, build_config, granularity_for
from bonsai.services.replay.prefix import request_units


@pytest.mark.parametrize(
    ("family", "common", "cached"),
    [
        ("openai", 1_023, 0),
        ("openai", 1_024, 1_024),
        ("openai", 1_151, 1_024),
        ("openai", 1_152, 1_152),
        ("openai", 5_000, 4_992),
        ("deepseek", 130, 128),
        ("anthropic", 1_500, 1_500),
        ("qwen", 1_151, 1_024),  # unknown families use OpenAI's rule
    ],
)
def test_granularity(family: str, common: int, cached: int) -> None:
    assert granularity_for(family).apply(common) == cached


def _units(texts: list[str]):  # type: ignore[no-untyped-def]
    config = build_config(window=200_000)
    messages = [Message(role="user", content=t) for t in texts]
    return config, request_units(
        config.counter, Message(role="system", content="s" * 6_000), [], messages
    )


def test_an_append_only_request_keeps_the_whole_previous_request() -> None:
    config, first = _units(["alpha " * 300])
    tracker = PrefixTracker(GRANULARITY["openai"], config.encode)
    assert tracker.measure(first) == 0  # nothing before the first request
    _, second = _units(["alpha " * 300, "beta " * 50])
    previous = sum(u[1] for u in first)
    assert tracker.measure(second) == GRANULARITY["openai"].apply(previous)


def test_a_rewritten_message_keeps_only_its_common_leading_tokens() -> None:
    config, first = _units(["same start " * 200 + "old ending " * 200, "tail"])
    tracker = PrefixTracker(GRANULARITY["anthropic"], config.encode)
    tracker.measure(first)
    _, second = _units(["same start " * 200 + "new ending " * 200, "tail"])
    system = second[0][1]
    cached = tracker.measure(second)
    assert system + 390 < cached < system + 420  # the 200 repeated words, not the rest
