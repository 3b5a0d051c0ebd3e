"""Rewrites at cache expiry: after a pause longer than the cache's TTL, the savings
the payback rule deferred are taken at no cache cost, and say so."""

from __future__ import annotations

from ctx_helpers import GC_SETTINGS, items_of, make_input, step, user

from bonsai.core.context import assemble
from bonsai.core.context.pricing import FAMILY_RULES


def _deferred() -> list:
    """One early output whose stub would re-send far more than it saves (GC waits),
    and an early read superseded by a later read of the same file."""
    messages = [user("fix it"), *step(0, "a" * 1_300, path="src/a.py")]
    messages += step(1, "r" * 900, path="src/r.py")
    messages += [m for n in range(2, 14) for m in step(n, "b" * 180, path=f"src/b{n}.py")]
    messages += step(14, "r" * 950, path="src/r.py")
    messages += step(15, "c" * 3_000, path="src/c.py")
    return items_of(messages)


def _assemble(idle: float | None):  # type: ignore[no-untyped-def]
    inp = make_input(_deferred(), window=20_000, reserve=10_000, settings=GC_SETTINGS)
    pricing = FAMILY_RULES["anthropic"]  # a 5-minute cache
    return assemble(inp.model_copy(update={"pricing": pricing, "idle_seconds": idle}))


def test_a_warm_cache_keeps_the_deferred_stubs_waiting() -> None:
    for idle in (None, 30.0, 299.0):
        result = _assemble(idle)
        assert result.records == [] and result.state.stubs == {}


def test_after_the_ttl_the_deferred_stubs_are_taken_and_recorded_as_an_expiry_rewrite() -> None:
    warm = _assemble(30.0)
    result = _assemble(301.0)
    assert {"m3", "m5"} <= set(result.state.stubs)  # the old output and the superseded read
    assert "taken at cache expiry" in result.state.stubs["m3"].reason
    expiry = [r for r in result.records if r.kind == "expiry"]
    assert len(expiry) == 1
    record = expiry[0]
    assert record.detail.startswith("rewrite at cache expiry (idle 301 s > TTL 300 s)")
    assert record.tokens_before == warm.totals.used
    assert record.tokens_after == result.totals.used < warm.totals.used
    saved = warm.totals.used - result.totals.used
    assert f"saved {saved:,} tokens at no cache cost" in record.detail
    # the protected tail is never touched, expired or not
    assert "m33" not in result.state.stubs


def test_the_next_warm_call_reasserts_the_expiry_stubs_without_new_rewrites() -> None:
    first = _assemble(400.0)
    inp = make_input(_deferred(), window=20_000, reserve=10_000, settings=GC_SETTINGS)
    again = assemble(inp.model_copy(update={"state": first.state, "idle_seconds": 5.0}))
    assert again.records == [] and again.messages == first.messages
