"""The search's faster paths rank exactly as the plain code they replaced.

Issue 24's speed work rewrote the hot loops of a query (the second hop over
its candidates, the relation families a question names, the final sort and
the memory prior) without changing one result. Each is checked here against
a reference copy of the code it replaced, on random inputs: same lifted
entries, same scores to the bit, same sources, same order.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import date

from hypothesis import given, settings
from hypothesis import strategies as st

from bonsai.core.retrieval.dates import date_prior
from bonsai.core.retrieval.fusion import Scores, ranked
from bonsai.core.retrieval.hop import STEP, second_hop
from bonsai.core.retrieval.priors import PriorParams, memory_prior, recency_bonus
from bonsai.core.retrieval.relations import RelationTable

WORDS = ["ana", "porto", "move", "work", "at", "lumen", "grid", "writer", "rel:residence", "x"]


def reference_hop(
    scores: Scores,
    heads: Sequence[str],
    links: Mapping[str, Collection[str]],
    candidates: Sequence[str],
    weights: Mapping[str, float],
    terms_of: Callable[[str], Collection[str]],
    average_terms: float,
    factor: float,
    limit: int,
    nomatch: bool,
    sources: dict[str, str],
) -> list[str]:
    """The second hop as it was before the speed work (relations left out:
    they only widen ``terms_of``, which both versions take as given)."""
    if limit <= 0 or not heads:
        return []
    skip = set(heads)
    best: dict[str, tuple[float, float]] = {}
    via: dict[str, str] = {}
    for doc_id in candidates:
        if doc_id in skip or doc_id in best:
            continue
        terms = terms_of(doc_id)
        match = sum(w for t, w in weights.items() if t in terms)
        norm = match / (0.25 + 0.75 * len(terms) / max(average_terms, 1.0))
        if match <= 0:
            norm = -float(len(terms))
        for rank, head in enumerate(heads):
            if not any(t in terms for t in links.get(head, ())):
                continue
            base = scores[head][0] or 0.0
            if match <= 0:
                if not nomatch:
                    continue
                score = base * factor * factor
            elif any(t in terms and t not in terms_of(head) for t in weights):
                score = base - STEP * (rank + 1)
            else:
                score = base * factor
            if doc_id not in best or (score, norm) > best[doc_id]:
                best[doc_id] = (score, norm)
                via[doc_id] = head
    chosen = sorted(best, key=lambda d: (-best[d][0], -best[d][1], d))[:limit]
    for offset, doc_id in enumerate(chosen):
        score = best[doc_id][0] - STEP * offset / (limit + 1)
        row = scores.get(doc_id)
        if row is None:
            scores[doc_id] = [score, None, None]
        elif (row[0] or 0.0) < score:
            row[0] = score
        else:
            continue
        sources[doc_id] = via[doc_id]
    return chosen


docs = st.sampled_from([f"d{i}" for i in range(12)])
term_sets = st.frozensets(st.sampled_from(WORDS), max_size=6)
score = st.floats(min_value=0.0, max_value=2.0, allow_nan=False)


@settings(max_examples=400, deadline=None)
@given(
    store=st.dictionaries(docs, term_sets, min_size=1),
    head_scores=st.dictionaries(docs, score, min_size=1, max_size=4),
    links=st.dictionaries(docs, st.sets(st.sampled_from(WORDS), max_size=3)),
    candidates=st.lists(docs, max_size=20),
    weights=st.dictionaries(st.sampled_from(WORDS), st.floats(0.0, 3.0), max_size=6),
    factor=st.floats(0.1, 0.9),
    limit=st.integers(0, 4),
    nomatch=st.booleans(),
)
def test_second_hop_lifts_exactly_what_the_plain_loop_lifted(
    store: dict[str, frozenset[str]],
    head_scores: dict[str, float],
    links: dict[str, set[str]],
    candidates: list[str],
    weights: dict[str, float],
    factor: float,
    limit: int,
    nomatch: bool,
) -> None:
    heads = sorted(head_scores)

    def terms_of(doc_id: str) -> frozenset[str]:
        return store.get(doc_id, frozenset())

    results = []
    for run in (reference_hop, None):
        scores: Scores = {h: [s, s, None] for h, s in head_scores.items()}
        sources: dict[str, str] = {}
        if run is None:
            chosen = second_hop(
                scores,
                heads,
                links,
                candidates,
                weights,
                terms_of=terms_of,
                average_terms=3.0,
                factor=factor,
                limit=limit,
                nomatch=nomatch,
                sources=sources,
            )
        else:
            chosen = run(
                scores,
                heads,
                links,
                candidates,
                weights,
                terms_of,
                3.0,
                factor,
                limit,
                nomatch,
                sources,
            )
        results.append((chosen, scores, sources))
    assert results[0] == results[1]


def reference_evoked(table: RelationTable, tokens: Sequence[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for family, runs in table.members.items():
        for run in runs:
            n = len(run)
            if any(tuple(tokens[i : i + n]) == run for i in range(len(tokens) - n + 1)):
                found.setdefault(family, []).extend(run)
    return found


TABLE = RelationTable.build(
    str.split,
    {"residence": ("moved to", "lives in", "resident"), "employment": ("works at", "hired", "at")},
)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(["moved", "to", "lives", "in", "works", "at", "hired", "resident"]))
)
def test_relation_families_found_as_by_the_scan_over_every_position(tokens: list[str]) -> None:
    assert TABLE.evoked(tokens) == reference_evoked(TABLE, tokens)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(docs, st.one_of(st.none(), score), min_size=0, max_size=12))
def test_ranked_orders_by_rounded_score_then_id(values: dict[str, float | None]) -> None:
    scores: Scores = {d: [v, None, None] for d, v in values.items()}
    assert ranked(scores) == sorted(scores, key=lambda d: (-round(scores[d][0] or 0.0, 6), d))


def reference_prior(
    meta: dict[str, object], today: date, params: PriorParams, window, latest: bool, when: bool
) -> float:
    bonus = params.project_tier if meta.get("tier") == "project" else 0.0
    bonus += date_prior(meta, window, params.date_match)
    if when and window is None and meta.get("timed") is True:
        bonus += params.when_match
    value = meta.get("updated")
    updated = None
    if isinstance(value, str):
        try:
            updated = date.fromisoformat(value)
        except ValueError:
            updated = None
    if latest and updated is not None and params.recency > 0:
        bonus += recency_bonus(updated, today, params) * params.latest / params.recency
    return bonus + recency_bonus(updated, today, params)


day = st.dates(min_value=date(2020, 1, 1), max_value=date(2026, 12, 31))


@settings(max_examples=400, deadline=None)
@given(
    tier=st.sampled_from(["project", "user"]),
    updated=st.one_of(st.none(), day.map(str), st.just("not a date")),
    dates=st.lists(day.map(str), max_size=3),
    timed=st.booleans(),
    window=st.one_of(st.none(), st.tuples(day, day).map(sorted).map(tuple)),
    latest=st.booleans(),
    when=st.booleans(),
)
def test_memory_prior_equals_the_plain_sum(
    tier: str,
    updated: str | None,
    dates: list[str],
    timed: bool,
    window: tuple[date, date] | None,
    latest: bool,
    when: bool,
) -> None:
    meta: dict[str, object] = {"tier": tier, "dates": dates, "timed": timed}
    if updated is not None:
        meta["updated"] = updated
    today, params = date(2026, 6, 1), PriorParams()
    expected = reference_prior(meta, today, params, window, latest, when)
    assert memory_prior(meta, today, params, window, latest=latest, when=when) == expected
