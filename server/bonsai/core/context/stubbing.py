"""Choosing a stub batch and writing it into the state (shared by GC and tier 1).

A batch is taken in candidate order until the request is down at the goal,
so one rewrite reclaims enough that the next is many steps away.
"""

from __future__ import annotations

from bonsai.core.context.candidates import Candidate, make_stub
from bonsai.core.context.context_state import ContextState, StubEntry, StubOrigin
from bonsai.core.context.pipeline_types import Record
from bonsai.core.context.pricing import Pricing, payback_ratio
from bonsai.core.context.view import stubbed_message
from bonsai.core.context.work import Work
from bonsai.settings import ContextSettings


def pays_for_itself(
    saved: int,
    used: int,
    resent: int,
    settings: ContextSettings,
    pricing: Pricing | None = None,
    *,
    cold: bool = False,
) -> bool:
    """The rewrite economics. A rewrite makes the provider re-read ``resent``
    tokens uncached (everything after the first change, except the messages new
    since the previous call, which are uncached anyway: ``Work.fresh_tokens``),
    so a batch must save at least ``min_rewrite_tokens`` or
    ``min_rewrite_fraction`` of the request, and at least
    ``min_rewrite_payback`` tokens per token it re-sends, scaled to ``pricing``
    (``bonsai.core.context.pricing.payback_ratio``: the same break-even in calls). On a
    ``cold`` cache (expired) nothing is cached to lose: any saving pays."""
    if cold:
        return saved > 0
    big_enough = (
        saved >= settings.min_rewrite_tokens or saved >= settings.min_rewrite_fraction * used
    )
    return big_enough and saved >= payback_ratio(settings.min_rewrite_payback, pricing) * resent


def work_pays(work: Work, saved: int, resent: int) -> bool:
    """``pays_for_itself`` under the work's prices and cache state."""
    return pays_for_itself(
        saved, work.used, resent, work.inp.settings, work.pricing, cold=work.cold
    )


def choose_stubs(
    work: Work, candidates: list[Candidate], goal: int, origin: StubOrigin
) -> tuple[dict[str, StubEntry], int]:
    """Stubs for ``candidates`` in order until the request would be at ``goal``,
    then every further candidate after the first stubbed position: the cache
    is lost from that position on anyway, so those stubs cost nothing more and
    push the next rewrite further away. Returns the stubs by item id and the
    tokens they save."""
    chosen: dict[str, StubEntry] = {}
    saved = 0
    rest = list(candidates)
    while rest and work.used - saved > goal:
        saved += take_stub(work, rest.pop(0), origin, chosen)
    if chosen:
        order = work.positions()
        first = min(order[i] for i in chosen)
        for cand in rest:
            if order[cand.node.item.id] > first:
                saved += take_stub(work, cand, origin, chosen)
    return chosen, saved


def take_stub(work: Work, cand: Candidate, origin: StubOrigin, chosen: dict[str, StubEntry]) -> int:
    """Add a stub for ``cand`` when it saves tokens; returns the saving."""
    node = cand.node
    entry = make_stub(node.item, node.full_tokens, cand.reason, origin, work.inp.turn, work.calls)
    _, stub_tokens, _ = stubbed_message(node.item, entry.text, work.inp.counter, work.inp.memo)
    gain = node.tokens - stub_tokens
    if gain <= 0:
        return 0
    chosen[node.item.id] = entry
    return gain


def add_stubs(state: ContextState, stubs: dict[str, StubEntry]) -> ContextState:
    return state.model_copy(update={"stubs": {**state.stubs, **stubs}})


def stub_records(stubs: dict[str, StubEntry]) -> list[Record]:
    return [
        Record(kind="stub", node_id=item_id, detail=entry.reason, tokens_before=entry.tokens_before)
        for item_id, entry in stubs.items()
    ]


def cache_note(kept: int, after: int) -> str:
    """How much of the rewritten request a provider cache can still serve."""
    resent = max(0, after - kept)
    return f"cache: ~{kept:,} leading tokens stay cached, ~{resent:,} are sent uncached once"
