"""Personalized PageRank on a weighted directed graph given as edge arrays.

Pure and deterministic: the same arrays in the same order give the same
floating-point result (``numpy.bincount`` sums in index order). No graph library:
the repository map builds its graph once per change and ranks it per request, and
a few ``bincount`` passes over flat arrays are faster than building networkx
objects for graphs of a few hundred thousand edges.

Semantics match networkx's ``pagerank(G, personalization=p, dangling=p)``: a
random surfer follows an out-edge with probability proportional to its weight
(probability ``damping``) or teleports to a node drawn from the personalization
vector; nodes without out-edges teleport by the personalization vector too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


class PageRankError(ValueError):
    """Raised for malformed graph input (bad node ids, negative weights...)."""


def _as_arrays(
    n_nodes: int,
    sources: Sequence[int] | IntArray,
    targets: Sequence[int] | IntArray,
    weights: Sequence[float] | FloatArray | None,
) -> tuple[IntArray, IntArray, FloatArray]:
    src = np.asarray(sources, dtype=np.int64)
    dst = np.asarray(targets, dtype=np.int64)
    if src.shape != dst.shape or src.ndim != 1:
        raise PageRankError("sources and targets must be 1-D arrays of the same length")
    w = np.ones(src.shape, dtype=np.float64) if weights is None else np.asarray(weights, float)
    if w.shape != src.shape:
        raise PageRankError("weights must have one entry per edge")
    if src.size and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= n_nodes):
        raise PageRankError(f"edge endpoints must lie in [0, {n_nodes})")
    if w.size and (not np.all(np.isfinite(w)) or w.min() < 0):
        raise PageRankError("edge weights must be finite and non-negative")
    return src, dst, w


def _teleport(n_nodes: int, personalization: Sequence[float] | FloatArray | None) -> FloatArray:
    if personalization is None:
        return np.full(n_nodes, 1.0 / n_nodes)
    p = np.asarray(personalization, dtype=np.float64)
    if p.shape != (n_nodes,):
        raise PageRankError(f"personalization must have {n_nodes} entries, got {p.shape}")
    if not np.all(np.isfinite(p)) or p.min() < 0:
        raise PageRankError("personalization must be finite and non-negative")
    total = float(p.sum())
    if total <= 0:
        return np.full(n_nodes, 1.0 / n_nodes)
    return p / total


# A sweep's change understates the remaining error more than a plain iteration's
# does, so sweeps stop at a 5x smaller change. With over-relaxation 1.2 this
# leaves the result closer to the fixed point than the plain iteration gets, in
# 18 sweeps instead of 48 iterations (stdlib graph, 47k nodes: L1 error 7e-5 and
# 9e-5 against 2e-4). 1.3 was faster still; 1.5 diverged there: 1.2 keeps margin.
BIPARTITE_TOL_FACTOR = 0.2
RELAXATION = 1.2


class Half(NamedTuple):
    """The edges from one side of a bipartite graph to the other."""

    sources: IntArray
    targets: IntArray  # relative to the first node of the target side
    share: FloatArray


class Transition(NamedTuple):
    """A graph prepared for repeated ranking: validated edges and the share of
    its source's rank each edge carries. Build once per graph (``transition``).
    ``halves``: for a bipartite graph (every edge crosses ``split``), the edges
    from nodes below ``split`` and from the rest."""

    n_nodes: int
    sources: IntArray
    targets: IntArray
    share: FloatArray
    dangling: IntArray  # nodes without out-edges
    split: int = 0
    halves: tuple[Half, Half] | None = None


def transition(
    n_nodes: int,
    sources: Sequence[int] | IntArray,
    targets: Sequence[int] | IntArray,
    weights: Sequence[float] | FloatArray | None = None,
    split: int = 0,
) -> Transition:
    """Validate an edge list and precompute what every ranking of it needs. With
    ``split`` > 0 and every edge crossing it, ranking uses bipartite sweeps."""
    src, dst, w = _as_arrays(n_nodes, sources, targets, weights)
    out_weight = np.bincount(src, weights=w, minlength=n_nodes)
    out_of_src = out_weight[src]  # gathered once: the division and its mask read it
    share = np.divide(w, out_of_src, out=np.zeros_like(w), where=out_of_src > 0)
    dangling = np.flatnonzero(out_weight == 0)
    return _prepared(n_nodes, src, dst, share, dangling, split)


def transition_of_shares(
    n_nodes: int,
    sources: IntArray,
    targets: IntArray,
    share: FloatArray,
    dangling: IntArray,
    split: int = 0,
) -> Transition:
    """``transition`` of a graph whose shares (each edge's part of its source's
    out-weight) and dangling nodes the caller already has — a patched graph
    takes most of them from the graph it was patched from. Validated alike;
    the shares are trusted to be ``transition``'s."""
    src, dst, checked = _as_arrays(n_nodes, sources, targets, share)
    nodes = np.asarray(dangling, dtype=np.int64)
    if nodes.size and (nodes.min() < 0 or nodes.max() >= n_nodes):
        raise PageRankError(f"dangling nodes must lie in [0, {n_nodes})")
    return _prepared(n_nodes, src, dst, checked, nodes, split)


def bipartite_of_shares(
    n_nodes: int,
    sources: IntArray,
    targets: IntArray,
    share: FloatArray,
    dangling: IntArray,
    split: int,
    n_forward: int,
) -> Transition:
    """``transition_of_shares`` for arrays the caller laid out itself: the first
    ``n_forward`` edges go from nodes below ``split`` to the rest, the others
    back (the repository map's views: file -> identifier edges, then identifier
    -> file). Nothing is validated or searched: the layout is what makes it
    ``transition_of_shares``'s result, array for array, without its passes over
    every edge (bounds, finiteness, which side each edge starts on)."""
    halves = (
        Half(sources[:n_forward], targets[:n_forward] - split, share[:n_forward]),
        Half(sources[n_forward:] - split, targets[n_forward:], share[n_forward:]),
    )
    return Transition(n_nodes, sources, targets, share, dangling, split, halves)


def _prepared(
    n_nodes: int,
    src: IntArray,
    dst: IntArray,
    share: FloatArray,
    dangling: IntArray,
    split: int,
) -> Transition:
    """The ``Transition`` of validated edges with their shares; with ``split``,
    its halves when every edge crosses it."""
    forward = src < split
    if not 0 < split < n_nodes or np.any(forward == (dst < split)):
        return Transition(n_nodes, src, dst, share, dangling)
    n_forward = int(np.count_nonzero(forward))
    if forward[:n_forward].all():  # forward edges first (the repository map's order): slices
        fwd: slice | npt.NDArray[np.bool_] = slice(0, n_forward)
        back: slice | npt.NDArray[np.bool_] = slice(n_forward, None)
    else:
        fwd, back = forward, ~forward
    halves = (
        Half(src[fwd], dst[fwd] - split, share[fwd]),
        Half(src[back] - split, dst[back], share[back]),
    )
    return Transition(n_nodes, src, dst, share, dangling, split, halves)


def _check_damping(damping: float) -> None:
    if not 0.0 <= damping < 1.0:
        raise PageRankError("damping must be in [0, 1)")


def rank_transition(
    graph: Transition,
    personalization: Sequence[float] | FloatArray | None = None,
    *,
    damping: float = 0.85,
    tol: float = 1e-8,
    max_iter: int = 100,
    start: FloatArray | None = None,
) -> FloatArray:
    """``personalized_pagerank`` on a prepared graph. A bipartite graph is ranked
    by over-relaxed block Gauss-Seidel sweeps (side B from side A, then side A
    from the new side B): the same fixed point in fewer passes over the edges.

    ``start``: the iteration's first vector (default: the personalization). A
    previous result of a slightly different graph or personalization (a warm
    start) reaches the stopping tolerance in a few sweeps instead of ~20; the
    result then lies within the tolerance of the cold-started one, not on the
    same bits."""
    n_nodes = graph.n_nodes
    if n_nodes <= 0:
        return np.zeros(0, dtype=np.float64)
    _check_damping(damping)
    teleport = _teleport(n_nodes, personalization)
    first = _start(n_nodes, start, teleport)
    if graph.halves is not None:
        return _bipartite(graph, graph.halves, teleport, damping, tol, max_iter, first)
    src, dst, share = graph.sources, graph.targets, graph.share
    carried = np.empty(len(src))
    scaled = np.empty(n_nodes)
    x = first.copy()
    for _ in range(max_iter):
        np.take(x, src, out=carried)
        carried *= share
        x_next: FloatArray = np.bincount(dst, weights=carried, minlength=n_nodes).astype(
            np.float64, copy=False
        )
        lost = float(x[graph.dangling].sum())
        x_next *= damping
        np.multiply(teleport, damping * lost + (1.0 - damping), out=scaled)
        x_next += scaled
        np.subtract(x_next, x, out=scaled)
        delta = float(np.abs(scaled, out=scaled).sum())
        x = x_next
        if delta < n_nodes * tol:
            break
    return x / float(x.sum())


def _start(n_nodes: int, start: FloatArray | None, teleport: FloatArray) -> FloatArray:
    """The first iterate: ``start`` normalised when usable, else the teleport."""
    if start is None:
        return teleport
    x = np.asarray(start, dtype=np.float64)
    if x.shape != (n_nodes,) or not np.all(np.isfinite(x)) or x.min() < 0:
        raise PageRankError(f"start must have {n_nodes} finite non-negative entries")
    total = float(x.sum())
    return x / total if total > 0 else teleport


def _half_step(
    half: Half,
    x_from: FloatArray,
    x_old: FloatArray,
    base: FloatArray,
    damping: float,
    omega: float,
    buffers: tuple[FloatArray, FloatArray] | None = None,
) -> FloatArray:
    """One side's new values from the other side, over-relaxed by ``omega``.
    ``buffers``: scratch of one value per edge of this half and one per node of
    its target side, reused across sweeps (the same operations, in place)."""
    if buffers is None:
        buffers = (np.empty(len(half.sources)), np.empty(len(x_old)))
    carried, scratch = buffers
    np.take(x_from, half.sources, out=carried)
    carried *= half.share
    flow: FloatArray = np.bincount(half.targets, weights=carried, minlength=len(x_old)).astype(
        np.float64, copy=False
    )
    flow *= damping
    flow += base
    if omega != 1.0:
        flow *= omega
        np.multiply(x_old, 1.0 - omega, out=scratch)
        flow += scratch
    return flow


def _bipartite(
    graph: Transition,
    halves: tuple[Half, Half],
    teleport: FloatArray,
    damping: float,
    tol: float,
    max_iter: int,
    first: FloatArray,
) -> FloatArray:
    """Sweeps over-relaxed by ``RELAXATION``; should they fail to converge (no
    bound guarantees they do on every graph), plain sweeps from the start."""
    for omega in (RELAXATION, 1.0):
        x, converged = _sweeps(graph, halves, teleport, damping, tol, max_iter, omega, first)
        if converged:
            break
    return x / float(x.sum())


def _sweeps(
    graph: Transition,
    halves: tuple[Half, Half],
    teleport: FloatArray,
    damping: float,
    tol: float,
    max_iter: int,
    omega: float,
    first: FloatArray,
) -> tuple[FloatArray, bool]:
    split = graph.split
    threshold = graph.n_nodes * tol * BIPARTITE_TOL_FACTOR
    x = first.copy()
    n_nodes = len(x)
    base, change = np.empty(n_nodes), np.empty(n_nodes)
    to_b = (np.empty(len(halves[0].sources)), np.empty(n_nodes - split))
    to_a = (np.empty(len(halves[1].sources)), np.empty(split))
    for _ in range(max_iter):
        lost = float(x[graph.dangling].sum())
        np.multiply(teleport, damping * lost + (1.0 - damping), out=base)
        side_b = _half_step(halves[0], x[:split], x[split:], base[split:], damping, omega, to_b)
        side_a = _half_step(halves[1], side_b, x[:split], base[:split], damping, omega, to_a)
        x_next = np.concatenate([side_a, side_b])
        np.subtract(x_next, x, out=change)
        delta = float(np.abs(change, out=change).sum())
        x = x_next
        if delta < threshold:
            return x, True
        if not np.isfinite(delta):
            break
    return x, False


def personalized_pagerank(
    n_nodes: int,
    sources: Sequence[int] | IntArray,
    targets: Sequence[int] | IntArray,
    weights: Sequence[float] | FloatArray | None = None,
    personalization: Sequence[float] | FloatArray | None = None,
    *,
    damping: float = 0.85,
    tol: float = 1e-8,
    max_iter: int = 100,
) -> FloatArray:
    """Return the PageRank vector (sums to 1) of an edge-list graph.

    Parallel edges add up. A personalization of all zeros (or ``None``) means
    uniform teleportation. Stops when the L1 change is below ``n_nodes * tol`` or
    after ``max_iter`` passes (then returns the last iterate: ranking needs order,
    not the tenth decimal).
    """
    if n_nodes <= 0:
        return np.zeros(0, dtype=np.float64)
    prepared = transition(n_nodes, sources, targets, weights)
    return rank_transition(prepared, personalization, damping=damping, tol=tol, max_iter=max_iter)


def edge_flow(
    ranks: FloatArray,
    sources: IntArray,
    weights: FloatArray,
    n_nodes: int,
) -> FloatArray:
    """Rank carried by each edge: the source's rank split by out-edge weight.

    This is how a node's rank is attributed to the things it points at (aider
    uses it to rank individual definitions)."""
    out_weight = np.bincount(sources, weights=weights, minlength=n_nodes)
    denom = out_weight[sources]
    return np.divide(ranks[sources] * weights, denom, out=np.zeros_like(weights), where=denom > 0)
