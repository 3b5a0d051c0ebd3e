"""Rewrites at cache expiry: deferred savings taken when they cost nothing.

A provider's prefix cache lives only minutes when idle (``Pricing.ttl_seconds``).
When a request comes later than that (``AssembleInput.idle_seconds``), the
whole prefix is billed uncached anyway, so rewriting it costs nothing. This
pass then takes what the payback rule was holding back:

- stubs: every superseded read (a later read or edit covers it), and old
  successful bulky outputs outside the protected tail while the request is
  above ``compact_target``;
- the reasoning of every step already acted on, outside the protected tail
  (``reasoning.py``);
- episodes ready to archive (the archive pass runs with the cache cold);
- a waiting fold: compaction after this pass pays on a cold cache.

The stages after it see ``Work.cold`` and apply the same free payback. One
``expiry`` record ("rewrite at cache expiry") says what the call saved.
"""

from __future__ import annotations

from bonsai.core.context.candidates import Candidate, stub_candidates
from bonsai.core.context.context_state import StubEntry
from bonsai.core.context.pipeline_types import Record
from bonsai.core.context.reasoning import condense, reasoning_candidates
from bonsai.core.context.stubbing import add_stubs, stub_records, take_stub
from bonsai.core.context.work import Work, analyse
from bonsai.core.replay.report import REWRITE_KINDS

EXPIRY_KIND = "expiry"
REASON = "taken at cache expiry"


def expiry_stubs(work: Work) -> tuple[Work, list[Record]]:
    """Stub what the payback rule deferred (the cache is cold: it is free)."""
    if not work.cold:
        return work, []
    settings = work.inp.settings
    candidates = stub_candidates(
        work.nodes,
        work.protected,
        work.superseded,
        min_tokens=settings.min_stub_tokens,
        include_failed=False,
    )
    goal = int(settings.compact_target * work.usable)
    chosen: dict[str, StubEntry] = {}
    saved = 0
    for cand in candidates:
        if cand.superseded or work.used - saved > goal:
            saved += take_stub(work, _labelled(cand), "gc", chosen)
    condensed, _ = condense(work, reasoning_candidates(work), reason=REASON)
    chosen.update(condensed)
    if not chosen:
        return work, []
    after = analyse(work.inp, add_stubs(work.state, chosen), work.frame.tools, work)
    return after, stub_records(chosen)


def _labelled(cand: Candidate) -> Candidate:
    return Candidate(cand.node, f"{cand.reason} ({REASON})", cand.superseded)


def expiry_record(first: Work, last: Work, records: list[Record]) -> list[Record]:
    """The ``expiry`` record of a call on a cold cache that rewrote anything."""
    if not first.cold or not {r.kind for r in records} & REWRITE_KINDS:
        return []
    idle = first.inp.idle_seconds or 0.0
    ttl = first.pricing.ttl_seconds
    saved = first.used - last.used
    stubs = sum(r.kind == "stub" for r in records)
    folds = sum(r.kind == "fold" for r in records)
    archives = sum(r.kind == "archive" for r in records)
    done = ", ".join(
        f"{n} {what}"
        for n, what in ((stubs, "stubs"), (folds, "fold"), (archives, "episodes archived"))
        if n
    )
    return [
        Record(
            kind=EXPIRY_KIND,
            detail=f"rewrite at cache expiry (idle {idle:,.0f} s > TTL {ttl:,.0f} s): "
            f"{done or 'rewritten'}, saved {saved:,} tokens at no cache cost",
            tokens_before=first.used,
            tokens_after=last.used,
            prefix_hash_before=first.prefix_hash(),
            prefix_hash_after=last.prefix_hash(),
        )
    ]
