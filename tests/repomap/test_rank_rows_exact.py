"""The per-request row pass of the ranking (``ranking.row_base``: the named
identifiers' bonus added only on their own rows; ``Ranked.order``: the named
files' rows marked by their ranges, the candidates accepted once their cut
clears the floor of the bases left out) equals the dense computation over every
row bit for bit, and the order equals a full sort of every row, also with files
excluded (in the conversation) and with the fused file scores."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from repomap_helpers import numbered_tags

from bonsai.services.repomap import ranking
from bonsai.services.repomap.graph import build_graph
from bonsai.services.repomap.mentions import Mentions


def _dense_row_base(graph, table, ranks, mentions, file_score):  # type: ignore[no-untyped-def]
    """The row bases as every row computed them before (the reference)."""
    file_rank = ranks[: len(graph.files)]
    is_def = table.node >= 0
    node = np.where(is_def, table.node, 0)
    flow = np.where(is_def, ranks[node] / table.ndef, 0.0)
    base = flow + np.where(is_def, 0.01, 0.1) * file_rank[table.fid]
    if file_score is not None and len(base):
        best = np.maximum.reduceat(base, np.minimum(table.offsets[:-1], len(base) - 1))
        best = np.where(np.diff(table.offsets) > 0, best, 1.0)
        base = file_score[table.fid] * base / np.maximum(best[table.fid], 1e-300)
    ident_bonus, file_bonus = ranking._bonus_vectors(graph, mentions)
    row_bonus = np.where(is_def, ident_bonus[node] / table.ndef, 0.0)
    if file_score is not None and len(base):
        row_bonus = row_bonus * file_score[table.fid]
        file_bonus = file_bonus * file_score
    return base + row_bonus, file_bonus


@settings(max_examples=120, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 8), max_size=6), min_size=2, max_size=30),
    st.integers(1, 40),
    st.integers(0, 2**31),
    st.lists(st.integers(0, 8), max_size=3),
    st.lists(st.integers(0, 29), max_size=3),
    st.lists(st.integers(0, 29), max_size=4),
    st.booleans(),
    st.sampled_from([(1, 0), (2, 1), (8, 256)]),
)
def test_row_bases_and_order_equal_the_dense_computation(
    defs_per_file: list[list[int]],
    count: int,
    seed: int,
    idents: list[int],
    named_files: list[int],
    excluded: list[int],
    fused: bool,
    widths: tuple[int, int],
) -> None:
    graph = build_graph(numbered_tags(defs_per_file))
    table = graph.table
    rng = np.random.default_rng(seed)
    ranks = np.round(rng.random(graph.n_nodes), 1)  # coarse values: many ties
    file_score = np.round(rng.random(len(graph.files)), 1) + 0.1 if fused else None
    files = {graph.files[f]: 1.0 for f in named_files if f < len(graph.files)}
    mentions = Mentions(files, {f"name_{n}": 1.0 for n in idents})

    base, bonus = ranking.row_base(graph, table, ranks, mentions, file_score)
    want_base, want_bonus = _dense_row_base(graph, table, ranks, mentions, file_score)
    assert base.tobytes() == want_base.tobytes()
    assert bonus.tobytes() == want_bonus.tobytes()

    out = np.zeros(len(graph.files), dtype=bool)
    out[[f for f in excluded if f < len(graph.files)]] = True
    keep = np.flatnonzero(~out[table.fid]) if out.any() else np.arange(len(base))
    score = ranking._scores(table.fid, base, bonus, np.arange(len(base)))
    full = np.lexsort((table.line, table.fid, -score))
    full = full[~out[table.fid[full]]]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ranking, "CANDIDATE_FACTOR", widths[0])
        mp.setattr(ranking, "CANDIDATE_SLACK", widths[1])
        ranked = ranking.Ranked(ranks[: len(graph.files)], base, bonus, keep, graph)
        assert ranked.order(count).tolist() == full[:count].tolist()


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.sampled_from([0.0, -0.0, 0.1, 0.25, 1.0, 3.5]))))
def test_the_rank_within_a_file_counts_the_better_rows_before_it(
    rows: list[tuple[int, float]],
) -> None:
    """k of a row = the rows of its file with a higher score, or the same score
    earlier (many ties, both signs of zero, files in any order)."""
    fid = np.array([f for f, _ in rows], dtype=np.int64)
    score = np.array([s for _, s in rows], dtype=np.float64)
    want = [
        sum(1 for j, (g, t) in enumerate(rows) if g == f and (t > s or (t == s and j < i)))
        for i, (f, s) in enumerate(rows)
    ]
    assert ranking._within_file_rank(fid, score).tolist() == want
    wide = fid + (1 << 16)  # a file id past 16 bits takes the plain stable sorts
    assert ranking._within_file_rank(wide, score).tolist() == want


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 8), max_size=6), min_size=2, max_size=30),
    st.integers(0, 2**31),
    st.integers(1, 12),
    st.integers(1, 200),
    st.lists(st.integers(0, 200), min_size=1, max_size=8),
    st.lists(st.integers(0, 29), max_size=3),
)
def test_entries_read_past_the_first_sort_are_the_full_orders_prefix(
    defs_per_file: list[list[int]],
    seed: int,
    hint: int,
    limit: int,
    reads: list[int],
    excluded: list[int],
) -> None:
    """``Ranked.entries`` sorts only the first ``rows_hint`` rows and a longer
    prefix when a reader goes past them (as the budget fit does, galloping then
    bisecting): whatever is read equals the full sort's prefix, and its length
    is ``limit`` rows at most, as many as there are outside the conversation."""
    graph = build_graph(numbered_tags(defs_per_file))
    table = graph.table
    rng = np.random.default_rng(seed)
    ranks = np.round(rng.random(graph.n_nodes), 1)
    base, bonus = ranking.row_base(graph, table, ranks, Mentions({}, {}), None)
    out = np.zeros(len(graph.files), dtype=bool)
    out[[f for f in excluded if f < len(graph.files)]] = True
    keep = np.flatnonzero(~out[table.fid]) if out.any() else np.arange(len(base))
    score = ranking._scores(table.fid, base, bonus, np.arange(len(base)))
    full = np.lexsort((table.line, table.fid, -score))
    full = full[~out[table.fid[full]]]
    want = [(graph.files[int(table.fid[r])], graph.definition(r)) for r in full.tolist()]
    ranked = ranking.Ranked(ranks[: len(graph.files)], base, bonus, keep, graph)
    ranked.rows_hint = hint
    entries = ranked.entries(limit)
    assert len(entries) == min(limit, len(keep))
    for k in reads:
        got = [(e.path, e.tag) for e in entries[:k]]
        expected = want[: min(k, len(entries))]
        assert [p for p, _ in got] == [p for p, _ in expected]
        assert [None if t is None else t.line for _, t in got] == [
            None if d is None else d.line for _, d in expected
        ]
