"""The ranks carried across a patch (the next PageRank's warm start) are the old
graph's, renumbered by path and name: a name defined before and after keeps its
rank wherever its node moved, a newly defined name starts at zero. Property test
over random definition changes, with few and many names new to the repository
(the shift by compare-and-add and by a remap table)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from repomap_helpers import numbered_tags

from bonsai.services.repomap.graph import RepoGraph, build_graph
from bonsai.services.repomap.graph_patch import patch_core_names
from bonsai.services.repomap.rank_carry import carried_ranks

_defs = st.lists(st.integers(0, 40), max_size=6)


@settings(max_examples=120, deadline=None)
@given(
    st.lists(_defs, min_size=2, max_size=6),
    st.data(),
)
def test_carried_ranks_follow_paths_and_names(before: list[list[int]], data: st.DataObject) -> None:
    old_tags = numbered_tags(before)
    old = build_graph(old_tags)
    k = data.draw(st.integers(0, len(before) - 1))
    # names 20-40 are rarely defined before: an edit bringing several is common
    after = [*before]
    after[k] = data.draw(_defs | st.lists(st.integers(20, 40), min_size=9, max_size=14))
    new_tags = numbered_tags(after)
    path = sorted(new_tags)[k]
    core, fresh = patch_core_names(old.core, {path: new_tags[path]}, (), old.file_index)
    new = RepoGraph(core, new_tags)
    ranks = np.random.default_rng(len(fresh)).uniform(0.1, 1.0, old.n_nodes)
    ranks /= ranks.sum()
    got = carried_ranks(old, ranks, new, fresh)
    expected = np.zeros(new.n_nodes)
    expected[: len(new.files)] = ranks[: len(old.files)]
    for name in new.idents:
        node, was = new.node(name), old.node(name)
        assert node is not None
        expected[node] = 0.0 if was is None else ranks[was]
    assert got is not None
    assert got.tobytes() == expected.tobytes()
