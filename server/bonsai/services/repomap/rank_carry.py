"""Carry a ranking across a graph patch: the ranks of the graph before an edit,
renumbered for the graph after it, as the starting vector of the next PageRank.

Files keep their rank by path, identifiers by name; a new file or a newly
defined name starts at zero (the iteration gives it its share). A patch only
ever adds names (``graph_patch.py``), so an old name's id in the new name list
follows from the few names it added, without comparing strings.
"""

from __future__ import annotations

from bisect import bisect_left

import numpy as np

from bonsai.core.repomap.pagerank import FloatArray
from bonsai.services.repomap.graph import RepoGraph
from bonsai.services.repomap.graph_patch import SHIFT_MAX_NEW, shifted


def carried_ranks(
    old: RepoGraph, old_ranks: FloatArray, new: RepoGraph, fresh: list[str]
) -> FloatArray | None:
    """``old_ranks`` (one per node of ``old``) renumbered for ``new``, which a
    patch made from ``old`` adding the names ``fresh``; None when the vectors do
    not fit (then the next ranking starts from scratch)."""
    if len(old_ranks) != old.n_nodes or len(new.core.names) != len(old.core.names) + len(fresh):
        return None
    start = np.zeros(new.n_nodes)
    n_old, n_new = len(old.files), len(new.files)
    if new.files is old.files:
        start[:n_new] = old_ranks[:n_old]
    else:
        index = old.file_index
        pairs = [(i, index[p]) for i, p in enumerate(new.files) if p in index]
        if pairs:
            to_new, from_old = np.array(pairs, dtype=np.int64).T
            start[to_new] = old_ranks[from_old]
    names = new.core.names
    positions = sorted(bisect_left(names, n) for n in fresh)
    # the old identifier nodes, in node order: old node n_old + j is old_idents[j]
    old_idents = np.flatnonzero(old.n_definers > 0)
    if len(positions) > SHIFT_MAX_NEW:
        is_new = np.zeros(len(names), dtype=bool)
        is_new[positions] = True
        new_ids = np.flatnonzero(~is_new)[old_idents]  # old name id -> new name id
    else:  # a compare-and-add per fresh name over the identifiers, not every name
        new_ids = shifted(old_idents, positions, old_idents[:0])
    new_node = new.node_of_name[new_ids]
    kept = new_node >= 0  # still defined
    if kept.all():
        start[new_node] = old_ranks[n_old:]
    else:
        start[new_node[kept]] = old_ranks[n_old:][kept]
    return start if float(start.sum()) > 0 else None
