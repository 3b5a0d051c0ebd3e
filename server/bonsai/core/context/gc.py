"""Continuous GC: under pressure, stub superseded reads and old bulky outputs.

Runs when the request being built passes ``gc_trigger`` of the usable window.
It takes candidates (superseded reads first, then old successful outputs,
oldest first) until the request is down at ``compact_target``, and keeps the
batch only when it pays for itself (``pays_for_itself``): a rewrite costs a
provider cache miss on everything after the first change, besides the messages
new since the previous call (those are uncached anyway). Below the trigger one
batch of every stale output and the reasoning of steps already acted on
(``reasoning.py``) is taken when it breaks even within the payback horizon.
"""

from __future__ import annotations

from bonsai.core.context.candidates import stub_candidates
from bonsai.core.context.context_state import StubEntry
from bonsai.core.context.pipeline_types import Record
from bonsai.core.context.pricing import break_even_calls
from bonsai.core.context.reasoning import condense, reasoning_candidates
from bonsai.core.context.stubbing import (
    add_stubs,
    cache_note,
    choose_stubs,
    stub_records,
    work_pays,
)
from bonsai.core.context.work import Work, analyse


def collect(work: Work) -> tuple[Work, list[Record]]:
    """The work after a GC pass (unchanged when nothing is worth rewriting) and its records."""
    settings = work.inp.settings
    used = work.used
    if used <= settings.gc_trigger * work.usable:
        return economic(work)
    candidates = stub_candidates(
        work.nodes,
        work.protected,
        work.superseded,
        min_tokens=settings.min_stub_tokens,
        include_failed=False,
    )
    goal = int(settings.compact_target * work.usable)
    chosen, saved = choose_stubs(work, candidates, goal, "gc")
    if not chosen:
        return work, []
    kept = work.tokens_before(set(chosen))
    resent = max(0, used - saved - kept - work.fresh_tokens())
    if not work_pays(work, saved, resent):
        return work, []
    return _apply(work, chosen, saved, kept)


STUB_TOKENS = 80  # about what a stub's text costs (what ran, why, how to get it back)
REASONING_TOKENS = 30  # about what a condensed step's marker costs


def economic(work: Work) -> tuple[Work, list[Record]]:
    """Below the trigger: one big batch of every candidate (stale outputs and the
    reasoning of steps already acted on, ``reasoning.py``), taken only when it
    breaks even (under the billed prices) within ``payback_horizon`` of the calls
    made so far: a session that has run N calls is expected to run about N more."""
    settings = work.inp.settings
    if settings.payback_horizon <= 0:
        return work, []
    candidates = stub_candidates(
        work.nodes,
        work.protected,
        work.superseded,
        min_tokens=settings.min_stub_tokens,
        include_failed=False,
    )
    thoughts = reasoning_candidates(work)
    calls = work.model_calls
    horizon = settings.payback_horizon * calls
    # decided on an estimate first (every call below the trigger comes here, and
    # building the stubs means counting each): a stub costs about STUB_TOKENS
    estimate = sum(c.node.tokens - STUB_TOKENS for c in candidates)
    estimate += sum(n.tokens - REASONING_TOKENS for n in thoughts)
    least = _least(work)
    if estimate < least:
        return work, []
    ids = {c.node.item.id for c in candidates} | {n.item.id for n in thoughts}
    first = work.tokens_before(ids)
    resent_estimate = max(0, work.used - estimate - first - work.fresh_tokens())
    if break_even_calls(estimate, resent_estimate, work.pricing) > horizon:
        return work, []
    chosen, saved = choose_stubs(work, candidates, 0, "gc")
    condensed, gained = condense(work, thoughts)
    chosen, saved = {**chosen, **condensed}, saved + gained
    if not chosen or saved < least:
        return work, []
    kept = work.tokens_before(set(chosen))
    resent = max(0, work.used - saved - kept - work.fresh_tokens())
    if break_even_calls(saved, resent, work.pricing) > horizon:
        return work, []
    return _apply(work, chosen, saved, kept)


ECONOMIC_SIZE_SHARE = 1.0  # below the trigger a batch needs this share of ``min_rewrite_tokens``


def _least(work: Work) -> int:
    """The smallest batch worth a rewrite below the trigger. The break-even rule
    already decides whether it pays; the size only keeps small batches from
    churning the cache. With stale outputs alone a whole ``min_rewrite_tokens``
    left most sessions that never reach the trigger unmanaged; with the old
    reasoning condensed in the same batch, half of it rewrote twice as often
    as the aim allows (measured: docs/context.md)."""
    return int(ECONOMIC_SIZE_SHARE * work.inp.settings.min_rewrite_tokens)


def _apply(
    work: Work, chosen: dict[str, StubEntry], saved: int, kept: int
) -> tuple[Work, list[Record]]:
    used = work.used
    after = analyse(work.inp, add_stubs(work.state, chosen), work.frame.tools, work)
    batch = Record(
        kind="gc",
        detail=f"{len(chosen)} stubs saved {saved:,} tokens; {cache_note(kept, after.used)}",
        tokens_before=used,
        tokens_after=after.used,
        prefix_hash_before=work.prefix_hash(),
        prefix_hash_after=after.prefix_hash(),
    )
    return after, [*stub_records(chosen), batch]
