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
    if not 0.0 <= damping < 1.0:
        raise PageRankError("damping must be in [0, 1)")
    src, dst, w = _as_arrays(n_nodes, sources, targets, weights)
    teleport = _teleport(n_nodes, personalization)
    out_weight = np.bincount(src, weights=w, minlength=n_nodes)
    dangling = out_weight == 0
    share = np.divide(w, out_weight[src], out=np.zeros_like(w), where=out_weight[src] > 0)
    x = teleport.copy()
    for _ in range(max_iter):
        flow = np.bincount(dst, weights=x[src] * share, minlength=n_nodes)
        lost = float(x[dangling].sum())
        x_next = damping * (flow + lost * teleport) + (1.0 - damping) * teleport
        delta = float(np.abs(x_next - x).sum())
        x = x_next
        if delta < n_nodes * tol:
            break
    return x / float(x.sum())


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
