"""The per-name arrays of a ranking view, patched after an edit instead of derived.

A view (``graph.RepoGraph``) starts from ``Counts``: the (name, file) definer
pairs sorted by name then file, how many files define and use each name, and
each name's weight. Derived from a core they cost a sort of every definition
row and a count of every reference; after an edit of a few files (the file list
unchanged) they follow from the previous view's: the edited files' pairs leave
and their new ones are inserted at their sorted places, the counts move by what
the edited files used and defined before and after, and the weights are
computed again for just the names whose counts could have changed. Names a
patch added (``graph_patch.py`` merges them into the sorted list) shift the old
ids by the few fresh names before them. The result equals the derivation bit
for bit (the weights are elementwise, ``graph.static_weights``); the tests
compare every array after random edit sequences.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Collection
from typing import NamedTuple

import numpy as np

from bonsai.core.repomap.pagerank import FloatArray, IntArray, Transition
from bonsai.services.repomap.graph import (
    Counts,
    DefEdges,
    GraphCore,
    RefEdges,
    RepoGraph,
    joined_edges,
    static_weights,
)
from bonsai.services.repomap.graph_patch import SHIFT_MAX_NEW, shifted


def _old_to_new(old: GraphCore, new: GraphCore, fresh: list[str]) -> IntArray | None:
    """Old name id -> new name id when ``fresh`` names were merged in (None: the
    ids are unchanged)."""
    if not fresh:
        return None
    is_new = np.zeros(len(new.names), dtype=bool)
    is_new[[bisect_left(new.names, n) for n in fresh]] = True
    return np.flatnonzero(~is_new).astype(np.int64)


def distinct(ids: IntArray) -> IntArray:
    """The sorted distinct values (``np.unique`` imports ``numpy.ma`` on first
    use: ~20 ms of an edit in a fresh process)."""
    ids = np.sort(ids)
    return ids[np.r_[True, ids[1:] != ids[:-1]]] if len(ids) else ids


def _rows(offsets: IntArray, fid: int) -> slice:
    return slice(int(offsets[fid]), int(offsets[fid + 1]))


class ViewPatch(NamedTuple):
    """What a patched view is made from: its counts, and for its reference
    edges the previous view, the edited files, the old -> new name ids and the
    names whose counts the edit could change."""

    old: RepoGraph
    counts: Counts
    fids: list[int]
    remap: IntArray | None
    touched: IntArray  # new name ids, ascending


def patched_counts(
    old: RepoGraph, core: GraphCore, fresh: list[str], edited: Collection[str]
) -> ViewPatch | None:
    """``Counts`` of ``core``, a patch of ``old.core`` that replaced the segments
    of the ``edited`` files and merged in the names ``fresh``; None when the file
    list changed or the names do not line up (then the view is derived)."""
    before = old.core
    if core.files is not before.files or len(core.names) != len(before.names) + len(fresh):
        return None
    if not edited or any(p not in old.file_index for p in edited):
        return None
    fids = sorted({old.file_index[p] for p in edited})
    n_files, n_names = len(core.files), len(core.names)
    remap = _old_to_new(before, core, fresh)
    # the fresh names' new ids, and where each goes among the old ids
    positions = sorted(bisect_left(core.names, n) for n in fresh)
    slots = [at - j for j, at in enumerate(positions)]

    def renamed(ids: IntArray) -> IntArray:  # a compare-and-add per fresh name, or a gather
        return ids if remap is None else shifted(ids, positions, remap)

    def widened(values: np.ndarray, fill: float) -> np.ndarray:  # old per-name -> new
        return values.copy() if remap is None else np.insert(values, slots, fill)

    # definer pairs: the edited files' leave, their new ones go in at their places
    gone = np.isin(old.pair_fid, fids) if len(fids) > 1 else old.pair_fid == fids[0]
    kept_name, kept_fid = renamed(old.pair_name[~gone]), old.pair_fid[~gone]
    added: list[IntArray] = []
    for fid in fids:
        names = core.def_names[_rows(core.def_offsets, fid)]
        added.append(distinct(names[names >= 0]) * n_files + fid)
    new_name, new_fid = np.divmod(np.sort(np.concatenate(added)), n_files)
    at = np.searchsorted(kept_name * n_files + kept_fid, new_name * n_files + new_fid)
    pair_name, pair_fid = np.insert(kept_name, at, new_name), np.insert(kept_fid, at, new_fid)
    n_definers = np.bincount(pair_name, minlength=n_names)
    # users: what the edited files referenced before leaves, what they do now comes
    n_users = widened(old.n_users, 0)
    touched: list[IntArray] = []
    for fid in fids:
        was = renamed(before.ref_names[_rows(before.ref_offsets, fid)])
        now = core.ref_names[_rows(core.ref_offsets, fid)]
        np.subtract.at(n_users, was, 1)
        np.add.at(n_users, now, 1)
        defined_before = before.def_names[_rows(before.def_offsets, fid)]
        defined_now = core.def_names[_rows(core.def_offsets, fid)]
        touched += [was, now, renamed(defined_before[defined_before >= 0])]
        touched.append(defined_now[defined_now >= 0])
    # weights: only names whose counts the edit could change (fresh ones among them)
    static = widened(old.static, 0.0)  # a fresh name's is computed below
    ids = distinct(np.concatenate(touched))
    static[ids] = static_weights(
        core.name_factor[ids], core.name_specific[ids], n_definers[ids], n_users[ids], n_files
    )
    counts = Counts(pair_name, pair_fid, n_definers, n_users, static)
    return ViewPatch(old, counts, fids, remap, ids)


def patched_ref_edges(patch: ViewPatch, view: RepoGraph, tail: DefEdges) -> RefEdges | None:
    """The reference edges of ``view`` (whose counts and node numbers came from
    ``patch``) spliced from the previous view's: a file keeps its edges, with the
    targets renumbered, unless it was edited or uses a name whose weight or
    definedness changed; those files' edges are made from their rows, as
    ``RepoGraph`` makes every file's. Returned joined with the definition edges
    ``tail`` (``graph.joined_edges``)."""
    old, core, n_files = patch.old, view.core, len(view.files)
    remap, ids = patch.remap, patch.touched
    old_ids = ids
    if remap is not None and not len(remap):
        old_ids = np.full(len(ids), -1, dtype=np.int64)
    elif remap is not None:  # old ids of the touched names (-1: a fresh name)
        old_ids = np.searchsorted(remap, ids)
        old_ids = np.where(remap[np.minimum(old_ids, len(remap) - 1)] == ids, old_ids, -1)
    known = old_ids >= 0
    was_defined = np.zeros(len(ids), dtype=bool)
    was_defined[known] = old.n_definers[old_ids[known]] > 0
    now_defined = view.n_definers[ids] > 0
    old_static = np.full(len(ids), np.nan)
    old_static[known] = old.static[old_ids[known]]
    changed = (was_defined != now_defined) | (now_defined & (view.static[ids] != old_static))
    affected = set(patch.fids)
    spread = ids[changed & known]  # names other files may use (a fresh one: only the edited)
    if len(spread):
        rows = np.flatnonzero(np.isin(core.ref_names, spread))
        affected.update((np.searchsorted(core.ref_offsets, rows, side="right") - 1).tolist())
    renumber: Renumber = None
    if (was_defined != now_defined).any():  # node numbers moved: old node -> new node
        became = ids[now_defined & ~was_defined]
        if not (was_defined & ~now_defined).any() and len(became) <= SHIFT_MAX_NEW:
            renumber = sorted(view.node_of_name[became].tolist())  # only new nodes went in
        else:
            old_idents = np.flatnonzero(old.n_definers > 0)
            renumber = view.node_of_name[old_idents if remap is None else remap[old_idents]]
    return _splice_ref_edges(old, view, sorted(affected), renumber, n_files, tail)


# how old identifier nodes become new ones: unchanged (None), the new nodes'
# numbers when nodes were only added (a compare-and-add each), else a table
Renumber = list[int] | IntArray | None


def _renumbered(targets: IntArray, renumber: Renumber, n_files: int) -> IntArray:
    if renumber is None:
        return targets
    if isinstance(renumber, list):
        return shifted(targets, renumber, targets[:0])
    result: IntArray = renumber[targets - n_files]
    return result


def _splice_ref_edges(
    old: RepoGraph,
    view: RepoGraph,
    affected: list[int],
    renumber: Renumber,
    n_files: int,
    tail: DefEdges,
) -> RefEdges:
    """Runs of unaffected files take the old edges (targets renumbered when the
    node numbers moved); each affected file's edges are made from its rows.
    When the old view's transition was made, its shares are spliced alike: an
    unaffected file's edges keep their weights, in order, so their shares are
    the same bits; an affected file's are its weights over their sum, summed in
    edge order as ``transition``'s ``bincount`` does."""
    core = view.core
    o_src, o_tgt, o_w, o_off = old.ref_edges[:4]
    carried: Transition | None = old.__dict__.get("transition")  # made once ranked
    o_share = None if carried is None or _dangling_idents(carried, n_files) else carried.share
    src: list[IntArray] = []
    tgt: list[IntArray] = []
    wts: list[FloatArray] = []
    shares: list[FloatArray] = []
    empty: list[int] = []  # affected files whose edges weigh nothing: dangling
    sizes: list[IntArray] = []
    at = 0
    for fid in [*affected, n_files]:
        if fid > at:  # files [at, fid) keep their edges
            lo, hi = int(o_off[at]), int(o_off[fid])
            targets = o_tgt[lo:hi]
            src.append(o_src[lo:hi])
            tgt.append(_renumbered(targets, renumber, n_files))
            wts.append(o_w[lo:hi])
            if o_share is not None:
                shares.append(o_share[lo:hi])
            sizes.append(np.diff(o_off[at : fid + 1]))
        if fid == n_files:
            break
        rows = _rows(core.ref_offsets, fid)
        names = core.ref_names[rows]
        nodes = view.node_of_name[names]
        keep = np.flatnonzero(nodes >= 0)
        weights = view.static[names.take(keep)] * core.ref_factor[rows].take(keep)
        src.append(np.full(len(keep), fid, dtype=np.int64))
        tgt.append(nodes.take(keep))
        wts.append(weights)
        if o_share is not None:
            share, weightless = _file_shares(weights)
            shares.append(share)
            if weightless:
                empty.append(fid)
        sizes.append(np.array([len(keep)], dtype=np.int64))
        at = fid + 1
    per_file = np.concatenate(sizes)
    offsets = np.concatenate([[0], np.cumsum(per_file)]).astype(np.int64, copy=False)
    if carried is None or o_share is None:
        return joined_edges(src, tgt, wts, offsets, tail)
    dangling = _patched_dangling(carried.dangling, affected, empty)
    return joined_edges(src, tgt, wts, offsets, tail, (shares, dangling))


def _dangling_idents(carried: Transition, n_files: int) -> bool:
    """Is an identifier node dangling (never in a view: every identifier node
    has its definers' edges)? Then nothing is carried over."""
    return bool(len(carried.dangling)) and int(carried.dangling[-1]) >= n_files


def _file_shares(weights: FloatArray) -> tuple[FloatArray, bool]:
    """One file's edge shares — each weight over their sum, summed in edge order
    (``np.bincount``, as ``transition`` sums every node's out-weight) — and
    whether the file is dangling (its edges weigh nothing)."""
    if not len(weights):
        return weights.copy(), True
    total = float(np.bincount(np.zeros(len(weights), dtype=np.int64), weights=weights)[0])
    if total <= 0:
        return np.zeros(len(weights)), True
    result: FloatArray = weights / total
    return result, False


def _patched_dangling(dangling: IntArray, affected: list[int], empty: list[int]) -> IntArray:
    """The dangling nodes after the splice: the old ones among the files not
    affected, and the affected files whose edges now weigh nothing."""
    n = max(int(dangling.max()) + 1 if len(dangling) else 0, max(affected, default=-1) + 1)
    mask = np.zeros(n, dtype=bool)
    mask[dangling] = True
    mask[affected] = False
    mask[empty] = True
    return np.flatnonzero(mask).astype(np.int64, copy=False)
