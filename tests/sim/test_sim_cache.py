"""The prefix-cache model: OpenAI/DeepSeek granularity and Anthropic breakpoints."""

from __future__ import annotations

import pytest

from bonsai.sim.cache import (
    AutomaticCache,
    BreakpointCache,
    common_prefix,
    round_deepseek,
    round_openai,
)


@pytest.mark.parametrize(
    ("a", "b", "n"),
    [
        ((1, 2, 3), (1, 2, 3), 3),
        ((1, 2, 3), (1, 2), 2),
        ((1, 2, 3), (9,), 0),
        ((), (1,), 0),
        ((1, 2, 3, 4), (1, 2, 5, 4), 2),
    ],
)
def test_common_prefix(a: tuple[int, ...], b: tuple[int, ...], n: int) -> None:
    assert common_prefix(a, b) == common_prefix(b, a) == n


@pytest.mark.parametrize(
    ("tokens", "cached"),
    [(0, 0), (1023, 0), (1024, 1024), (1151, 1024), (1152, 1152), (5000, 4992)],
)
def test_openai_rounding_has_a_1024_floor_and_128_steps(tokens: int, cached: int) -> None:
    assert round_openai(tokens) == cached


def test_deepseek_rounds_to_64_token_units() -> None:
    assert [round_deepseek(n) for n in (63, 64, 200)] == [0, 64, 192]


def test_automatic_cache_matches_the_best_recent_prompt() -> None:
    cache = AutomaticCache()
    base = tuple(range(3000))
    assert cache.lookup(base) == 0
    cache.store(base)
    cache.store(tuple(range(1500)))
    assert cache.lookup((*base[:2000], 99999)) == round_openai(2000)
    assert cache.lookup((7, *base)) == 0  # a changed first token invalidates everything


def test_automatic_cache_forgets_beyond_its_capacity() -> None:
    cache = AutomaticCache(capacity=2)
    first = tuple(range(2000))
    cache.store(first)
    cache.store((1,) * 2000)
    cache.store((2,) * 2000)
    assert cache.lookup(first) == 0


def test_breakpoint_cache_writes_then_reads_up_to_the_last_matching_breakpoint() -> None:
    cache = BreakpointCache()
    prompt = tuple(range(4000))
    first = cache.lookup(prompt, [1500, 3000])
    assert (first.read, first.written) == (0, 3000)
    cache.store(prompt, [1500, 3000])
    changed_tail = prompt[:2000] + tuple(range(10_000, 12_000))
    second = cache.lookup(changed_tail, [1500, 3500])
    assert (second.read, second.written) == (1500, 2000)  # 3000 no longer matches


def test_a_moving_last_breakpoint_still_hits_the_previous_turns_entry() -> None:
    cache = BreakpointCache()
    turn1 = tuple(range(2000))
    cache.store(turn1, [2000])
    turn2 = turn1 + tuple(range(50_000, 50_300))
    result = cache.lookup(turn2, [2300])
    assert (result.read, result.written) == (2000, 300)


def test_breakpoints_below_the_minimum_neither_read_nor_write() -> None:
    cache = BreakpointCache()
    small = tuple(range(900))
    cache.store(small, [900])
    assert cache.lookup(small, [900]) == cache.lookup(small, [])
    assert cache.lookup(small, [900]).read == 0 and cache.lookup(small, [900]).written == 0
