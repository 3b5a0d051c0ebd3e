"""Personalized PageRank against a dense power-iteration reference."""

from __future__ import annotations

import numpy as np
import pytest

from bonsai.core.repomap.pagerank import (
    PageRankError,
    edge_flow,
    personalized_pagerank,
    rank_transition,
    transition,
)


def dense_reference(n, edges, personalization=None, damping=0.85, iters=500):
    """Textbook power iteration on a dense transition matrix (dangling nodes
    teleport by the personalization vector, as networkx does)."""
    p = np.full(n, 1.0 / n) if personalization is None else np.asarray(personalization, float)
    p = p / p.sum()
    m = np.zeros((n, n))
    for s, t, w in edges:
        m[t, s] += w
    out = m.sum(axis=0)
    x = p.copy()
    for _ in range(iters):
        flow = m @ np.divide(x, out, out=np.zeros(n), where=out > 0)
        x = damping * (flow + x[out == 0].sum() * p) + (1 - damping) * p
    return x / x.sum()


EDGES = [(0, 1, 1.0), (1, 2, 2.0), (2, 0, 1.0), (2, 1, 0.5), (3, 2, 1.0), (0, 1, 3.0)]


def test_matches_dense_reference_uniform() -> None:
    src, dst, w = zip(*EDGES, strict=True)
    got = personalized_pagerank(5, src, dst, w, tol=1e-12, max_iter=1000)
    np.testing.assert_allclose(got, dense_reference(5, EDGES), atol=1e-9)
    assert got.sum() == pytest.approx(1.0)


def test_matches_dense_reference_personalized() -> None:
    src, dst, w = zip(*EDGES, strict=True)
    pers = [0.0, 0.0, 0.0, 1.0, 3.0]
    got = personalized_pagerank(5, src, dst, w, pers, tol=1e-12, max_iter=1000)
    np.testing.assert_allclose(got, dense_reference(5, EDGES, pers), atol=1e-9)


def test_two_node_cycle_hand_computed() -> None:
    # symmetric cycle: both nodes must get exactly 1/2
    got = personalized_pagerank(2, [0, 1], [1, 0])
    np.testing.assert_allclose(got, [0.5, 0.5])


def test_star_hub_ranks_first() -> None:
    got = personalized_pagerank(4, [1, 2, 3], [0, 0, 0])
    assert int(np.argmax(got)) == 0
    # leaves are symmetric
    assert got[1] == pytest.approx(got[2]) == pytest.approx(got[3])


def test_deterministic_bytes() -> None:
    src, dst, w = zip(*EDGES, strict=True)
    a = personalized_pagerank(5, src, dst, w, [1, 0, 0, 0, 0])
    b = personalized_pagerank(5, src, dst, w, [1, 0, 0, 0, 0])
    assert a.tobytes() == b.tobytes()


def test_edge_flow_splits_rank_by_weight() -> None:
    ranks = np.array([0.6, 0.4])
    flow = edge_flow(ranks, np.array([0, 0, 1]), np.array([1.0, 3.0, 2.0]), 2)
    np.testing.assert_allclose(flow, [0.15, 0.45, 0.4])


@pytest.mark.parametrize(
    ("src", "dst", "w", "pers", "message"),
    [
        ([0], [5], None, None, "endpoints"),
        ([0], [1], [-1.0], None, "non-negative"),
        ([0, 1], [1], None, None, "same length"),
        ([0], [1], None, [1.0], "personalization"),
    ],
)
def test_bad_input_raises(src, dst, w, pers, message) -> None:
    with pytest.raises(PageRankError, match=message):
        personalized_pagerank(2, src, dst, w, pers)


def test_empty_graph() -> None:
    assert personalized_pagerank(0, [], []).size == 0
    np.testing.assert_allclose(personalized_pagerank(3, [], []), [1 / 3] * 3)


def _bipartite_edges(seed: int, left: int, right: int) -> list[tuple[int, int, float]]:
    """A random graph whose every edge crosses between nodes < left and the rest;
    some nodes on each side get no out-edges (dangling)."""
    rng = np.random.default_rng(seed)
    edges = []
    for s in range(left - 2):
        for t in rng.choice(right, size=3, replace=False):
            edges.append((s, left + int(t), float(rng.uniform(0.1, 5.0))))
    for t in range(right - 1):
        for s in rng.choice(left, size=2, replace=False):
            edges.append((left + t, int(s), 1.0))
    return edges


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_bipartite_sweeps_match_dense_reference(seed: int) -> None:
    left, right = 12, 20
    edges = _bipartite_edges(seed, left, right)
    src, dst, w = zip(*edges, strict=True)
    pers = np.random.default_rng(seed).uniform(0, 1, left + right)
    pers[left + 3] = 5.0  # an identifier named by the user
    graph = transition(left + right, src, dst, w, split=left)
    assert graph.halves is not None  # the bipartite path is the one under test
    got = rank_transition(graph, pers, tol=1e-13, max_iter=1000)
    np.testing.assert_allclose(got, dense_reference(left + right, edges, pers), atol=1e-9)
    plain = rank_transition(transition(left + right, src, dst, w), pers)
    assert np.abs(rank_transition(graph, pers) - plain).sum() < 1e-5  # default tolerance


def test_split_that_edges_do_not_respect_ranks_plainly() -> None:
    src, dst, w = zip(*EDGES, strict=True)
    graph = transition(5, src, dst, w, split=2)
    assert graph.halves is None
    np.testing.assert_allclose(
        rank_transition(graph, tol=1e-12, max_iter=1000), dense_reference(5, EDGES), atol=1e-9
    )


def test_a_transition_from_carried_shares_equals_the_computed_one() -> None:
    """``transition_of_shares`` (a patched graph's shares, carried over) gives the
    transition ``transition`` computes, halves included, and rejects dangling
    nodes outside the graph."""
    from bonsai.core.repomap.pagerank import PageRankError, transition, transition_of_shares

    src = np.array([0, 0, 1, 3, 4, 4], dtype=np.int64)
    dst = np.array([3, 4, 4, 0, 1, 2], dtype=np.int64)
    w = np.array([1.0, 3.0, 2.0, 1.0, 1.0, 1.0])
    made = transition(5, src, dst, w, split=3)
    carried = transition_of_shares(5, src, dst, made.share, made.dangling, split=3)
    assert made.dangling.tolist() == [2]  # a file nobody's edges leave
    for a, b in zip(made, carried, strict=True):
        if isinstance(a, np.ndarray):
            assert a.tobytes() == b.tobytes()
    assert made.halves is not None and carried.halves is not None
    for half, other in zip(made.halves, carried.halves, strict=True):
        assert all(x.tobytes() == y.tobytes() for x, y in zip(half, other, strict=True))
    with pytest.raises(PageRankError):
        transition_of_shares(5, src, dst, made.share, np.array([5]), split=3)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_laid_out_bipartite_transition_equals_the_computed_one(seed: int) -> None:
    """``bipartite_of_shares`` (a repository-map view's edges, forward ones first)
    gives ``transition``'s arrays and halves byte for byte, so it ranks alike."""
    from bonsai.core.repomap.pagerank import bipartite_of_shares

    left, right = 12, 20
    edges = sorted(_bipartite_edges(seed, left, right), key=lambda e: e[0] >= left)
    src, dst, w = (np.array(x) for x in zip(*edges, strict=True))
    made = transition(left + right, src, dst, w, split=left)
    n_forward = int((src < left).sum())
    laid = bipartite_of_shares(left + right, src, dst, made.share, made.dangling, left, n_forward)
    for a, b in zip(made, laid, strict=True):
        if isinstance(a, np.ndarray):
            assert a.tobytes() == b.tobytes()
    assert made.halves is not None and laid.halves is not None
    for half, other in zip(made.halves, laid.halves, strict=True):
        assert all(x.tobytes() == y.tobytes() for x, y in zip(half, other, strict=True))
    pers = np.random.default_rng(seed).uniform(0, 1, left + right)
    assert rank_transition(laid, pers).tobytes() == rank_transition(made, pers).tobytes()
