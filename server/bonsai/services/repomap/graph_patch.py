"""Update the reference graph after edits without rebuilding it.

Applies when the set of files is unchanged and every edited file still defines
the same names (the common edit: a function body, a signature, an import).
Then identifier node ids stay valid: only the edited files' reference segments,
the use counts of the names they touch and those names' static weights are
recomputed. The result is identical, array for array, to a fresh
``build_graph`` of the same tags (tests check the bytes). Any other change
returns None and the caller rebuilds.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from bonsai.services.repomap.graph import (
    RefEdges,
    RepoGraph,
    assemble,
    file_segment,
    ident_weight,
)
from bonsai.services.repomap.models import FileTags

Old = Mapping[str, FileTags | None]  # previous tags of the edited files
Tags = Mapping[str, FileTags]


def _names(ft: FileTags | None) -> frozenset[str]:
    return frozenset() if ft is None else frozenset(d.name for d in ft.definitions)


def patchable(graph: RepoGraph, old: Old, tags: Tags) -> bool:
    if len(tags) != len(graph.files) or any(p not in graph.file_index for p in old):
        return False
    if any(p not in tags for p in old):
        return False
    return all(_names(before) == _names(tags[p]) for p, before in old.items())


def _users(graph: RepoGraph, old: Old, tags: Tags) -> tuple[dict[str, int], set[str]]:
    users = dict(graph.refs.users)
    touched: set[str] = set()
    for path, before in old.items():
        for name in () if before is None else before.references:
            users[name] -= 1
            touched.add(name)
        for name in tags[path].references:
            users[name] = users.get(name, 0) + 1
            touched.add(name)
    return {k: v for k, v in users.items() if v > 0}, touched


def patch_graph(graph: RepoGraph, old: Old, tags: Tags) -> RepoGraph | None:
    """The graph for ``tags``, given the previous tags of the changed files
    (``old``), or None when the change needs a full rebuild."""
    if not patchable(graph, old, tags):
        return None
    n_files = len(graph.files)
    users, touched = _users(graph, old, tags)
    static = graph.refs.static.copy()
    for name in touched:
        node = graph.ident_index.get(name)
        if node is not None:
            n_def = len(graph.definers[name])
            static[node - n_files] = ident_weight(name, n_def, users.get(name, 0), n_files)
    offsets, nodes, factor = graph.refs.offsets, graph.refs.nodes, graph.refs.factor
    node_parts: list[np.ndarray] = []
    factor_parts: list[np.ndarray] = []
    sizes = np.diff(offsets).copy()
    cursor = 0
    for fid in sorted(graph.file_index[p] for p in old):
        seg_nodes, seg_factor = file_segment(tags[graph.files[fid]], graph.ident_index)
        node_parts += [nodes[cursor : offsets[fid]], seg_nodes]
        factor_parts += [factor[cursor : offsets[fid]], seg_factor]
        cursor = int(offsets[fid + 1])
        sizes[fid] = len(seg_nodes)
    node_parts.append(nodes[cursor:])
    factor_parts.append(factor[cursor:])
    refs = RefEdges(
        np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
        np.concatenate(node_parts),
        np.concatenate(factor_parts),
        users,
        static,
    )
    return assemble(graph.files, graph.idents, graph.definers, refs, tags, same_idents_as=graph)
