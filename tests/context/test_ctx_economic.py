"""Rewrites below the GC trigger: one batch of stale outputs is taken when it breaks
even within ``payback_horizon`` of the calls made so far, and is at least
``min_rewrite_tokens`` (8,000 by default); otherwise the request stays as it was."""

from __future__ import annotations

from ctx_helpers import items_of, make_input, step, user

from bonsai.core.context import assemble
from bonsai.domain import Message
from bonsai.settings import ContextSettings

BALANCED = ContextSettings()  # the default preset: payback_horizon 0.5
WINDOW = 400_000  # usable 390,000: the GC trigger (40%) is far above these sessions


def _session(stale_reads: int, later_steps: int, *, chatty: bool = False) -> list[Message]:
    """A task, ``stale_reads`` reads of one file (each read again by the next), then
    ``later_steps`` steps with small outputs (never stub candidates)."""
    messages = [user("Fix the parser.")]
    for n in range(stale_reads):
        messages += step(n, f"line {n} of parser.py\n" * 55, path="src/parser.py")
    for n in range(stale_reads, stale_reads + later_steps):
        small = step(n, f"ok {n}")
        if chatty:  # the agent writes a long reasoning each step: a rewrite re-sends it
            small[0] = small[0].model_copy(update={"content": "Thinking. " * 150})
        messages += small
    return messages


def _gc(messages: list[Message]) -> list[str]:
    result = assemble(make_input(items_of(messages), window=WINDOW, settings=BALANCED))
    assert result.totals.used < BALANCED.gc_trigger * result.totals.usable  # below the trigger
    return [r.kind for r in result.records]


def test_a_long_session_sheds_its_stale_reads_once_they_pay_back() -> None:
    """About 9,900 tokens of old reads of one file, then 40 cheap steps: stubbing
    them saves about 8,400 tokens on each later call and re-sends about 4,700 once,
    breaking even after about 5 calls, within half of the 49 calls made so far."""
    kinds = _gc(_session(stale_reads=9, later_steps=40))
    assert kinds.count("stub") == 9 and kinds.count("gc") == 1


def test_a_young_or_chatty_session_keeps_its_cache() -> None:
    """The same reads followed by 2 steps of long reasoning (protected: the recent
    groups): the rewrite would save about 8,400 tokens per call, enough for the
    floor, but re-send the reasoning and the last reads, breaking even after more
    calls than half of the 11 made so far: nothing is rewritten."""
    assert _gc(_session(stale_reads=9, later_steps=2, chatty=True)) == []


def test_a_small_batch_is_not_worth_a_rewrite_below_the_trigger() -> None:
    """Seven old reads (about 7,700 tokens, 6,500 saved) pay back quickly but are
    under the 8,000-token floor that keeps small batches from churning the cache."""
    assert _gc(_session(stale_reads=7, later_steps=40)) == []


def test_no_rewrite_below_the_trigger_when_the_horizon_is_off() -> None:
    settings = BALANCED.model_copy(update={"payback_horizon": 0.0})
    items = items_of(_session(stale_reads=9, later_steps=40))
    result = assemble(make_input(items, window=WINDOW, settings=settings))
    assert result.records == []
