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
    is_new = np.zeros(len(names), dtype=bool)
    is_new[[bisect_left(names, n) for n in fresh]] = True
    old_to_new = np.flatnonzero(~is_new)  # old name id -> new name id
    old_node = old.node_of_name
    new_node = new.node_of_name[old_to_new]
    both = (old_node >= 0) & (new_node >= 0)
    start[new_node[both]] = old_ranks[old_node[both]]
    return start if float(start.sum()) > 0 else None
