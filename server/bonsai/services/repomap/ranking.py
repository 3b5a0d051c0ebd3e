"""Rank files and definitions for one request, and order them for rendering.

1. Personalization: 10% spread evenly over files, 90% over the session's
   signals: files in the conversation, files named in the text, recently
   read/edited files (half weight), and identifiers named in the text — those
   go to the identifier's own node, so their definers receive rank directly
   even when nothing in the conversation references them.
2. Personalized PageRank over the reference graph.
3. A definition's score is the rank its identifier passes to its file. On top,
   named definitions (a specific identifier defined in at most
   ``NAMED_MAX_DEFINERS`` files) and the top definitions of named files get a bonus larger than any
   rank, so what the user named is rendered first. Within a file the k-th best
   definition is divided by (1 + k), so the map covers more files.

Everything is vectorised over a definition table built once per graph, and ties
break by (path, line): the order is deterministic.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import NamedTuple

import numpy as np

from bonsai.core.pagerank import FloatArray, IntArray, personalized_pagerank
from bonsai.core.repomap_render import MapEntry, MapTag
from bonsai.services.repomap.graph import RepoGraph
from bonsai.services.repomap.mentions import Mentions
from bonsai.services.repomap.models import Definition

_NO_INTS: IntArray = np.zeros(0, dtype=np.int64)
_NO_FLOATS: FloatArray = np.zeros(0, dtype=np.float64)
BASE_SHARE = 0.10
RECENT_WEIGHT = 0.5
UNREFERENCED_SHARE = 0.01  # score of a definition nobody references, × file rank
FILE_ONLY_SHARE = 0.1  # score of a file without definitions, × file rank
NAMED_MAX_DEFINERS = 8
NAMED_MIN_WEIGHT = 0.3  # plain words ("open", "value") rank but get no bonus
NAMED_IDENT_BONUS = 2.0
NAMED_FILE_BONUS = 1.0
NAMED_FILE_TOP_DEFS = 3


class DefTable(NamedTuple):
    """One row per definition, plus one row per file without definitions; file
    i's rows are ``[offsets[i], offsets[i + 1])``."""

    fid: IntArray
    node: IntArray  # identifier node, -1 for a file-only row
    ndef: FloatArray  # number of files defining the identifier (1 for file rows)
    line: IntArray
    defs: list[Definition | None]
    offsets: IntArray


class Ranked(NamedTuple):
    file_rank: FloatArray  # per file id, normalised to sum 1
    order: IntArray  # DefTable rows, best first (conversation files excluded)
    table: DefTable
    graph: RepoGraph
    named: list[str]  # files leading the order because the user named them

    def entries(self, limit: int) -> list[MapEntry]:
        out: list[MapEntry] = []
        for row in self.order[:limit].tolist():
            path = self.graph.files[int(self.table.fid[row])]
            d = self.table.defs[row]
            out.append(MapEntry(path, None if d is None else MapTag(d.line, d.signature, d.depth)))
        return out


class _Rows(NamedTuple):
    defs: list[Definition | None]
    fid: IntArray
    node: IntArray
    ndef: FloatArray
    line: IntArray


def _rows(graph: RepoGraph, fid: int) -> _Rows:
    defs: list[Definition | None] = list(graph.tags[graph.files[fid]].definitions) or [None]
    index, definers, count = graph.ident_index, graph.definers, len(defs)
    node = np.fromiter((-1 if d is None else index[d.name] for d in defs), np.int64, count)
    ndef = np.fromiter((1 if d is None else len(definers[d.name]) for d in defs), float, count)
    line = np.fromiter((0 if d is None else d.line for d in defs), np.int64, count)
    return _Rows(defs, np.full(count, fid, dtype=np.int64), node, ndef, line)


def _table(parts: list[_Rows]) -> DefTable:
    offsets = np.concatenate([[0], np.cumsum([len(p.defs) for p in parts])]).astype(np.int64)
    return DefTable(
        np.concatenate([_NO_INTS, *(p.fid for p in parts)]),
        np.concatenate([_NO_INTS, *(p.node for p in parts)]),
        np.concatenate([_NO_FLOATS, *(p.ndef for p in parts)]),
        np.concatenate([_NO_INTS, *(p.line for p in parts)]),
        [d for p in parts for d in p.defs],
        offsets,
    )


def build_table(graph: RepoGraph) -> DefTable:
    return _table([_rows(graph, fid) for fid in range(len(graph.files))])


def patch_table(table: DefTable, graph: RepoGraph, changed: Collection[str]) -> DefTable:
    """Replace the rows of ``changed`` files (graph patched, identifiers unchanged)."""
    fids = sorted(graph.file_index[p] for p in changed)
    parts: list[_Rows] = []
    cursor = 0
    for fid in fids:
        lo, hi = int(table.offsets[fid]), int(table.offsets[fid + 1])
        parts += [_slice(table, cursor, lo), _rows(graph, fid)]
        cursor = hi
    parts.append(_slice(table, cursor, len(table.defs)))
    return _table(parts)


def _slice(table: DefTable, lo: int, hi: int) -> _Rows:
    return _Rows(
        table.defs[lo:hi], table.fid[lo:hi], table.node[lo:hi], table.ndef[lo:hi], table.line[lo:hi]
    )


def personalization(
    graph: RepoGraph,
    chat_files: Collection[str],
    recent_files: Collection[str],
    mentions: Mentions,
) -> FloatArray:
    n_files = len(graph.files)
    signal = np.zeros(graph.n_nodes)
    for path in chat_files:
        if path in graph.file_index:
            signal[graph.file_index[path]] += 1.0
    for path in recent_files:
        if path in graph.file_index:
            signal[graph.file_index[path]] += RECENT_WEIGHT
    for path, weight in mentions.files.items():
        if path in graph.file_index:
            signal[graph.file_index[path]] += weight
    for name, weight in mentions.idents.items():
        if name in graph.ident_index:
            signal[graph.ident_index[name]] += weight
    vector = np.zeros(graph.n_nodes)
    total = float(signal.sum())
    if total <= 0:
        vector[:n_files] = 1.0 / max(1, n_files)
        return vector
    vector[:n_files] = BASE_SHARE / max(1, n_files)
    return vector + (1.0 - BASE_SHARE) * signal / total


def _within_file_rank(fid: IntArray, score: FloatArray, line: IntArray) -> IntArray:
    """k = position of each row among its file's rows, best score first."""
    order = np.lexsort((line, -score, fid))
    sorted_fid = fid[order]
    starts = np.r_[0, np.flatnonzero(np.diff(sorted_fid)) + 1]
    group_start = np.repeat(starts, np.diff(np.r_[starts, len(order)]))
    k = np.empty_like(order)
    k[order] = np.arange(len(order)) - group_start
    return k


def _gets_bonus(graph: RepoGraph, name: str, weight: float) -> bool:
    ids = graph.definers.get(name)
    return ids is not None and len(ids) <= NAMED_MAX_DEFINERS and weight >= NAMED_MIN_WEIGHT


def _bonus_vectors(graph: RepoGraph, mentions: Mentions) -> tuple[FloatArray, FloatArray]:
    ident_bonus = np.zeros(graph.n_nodes)
    for name, weight in mentions.idents.items():
        node = graph.ident_index.get(name)
        if node is not None and _gets_bonus(graph, name, weight):
            ident_bonus[node] = NAMED_IDENT_BONUS * weight
    file_bonus = np.zeros(len(graph.files))
    for path, weight in mentions.files.items():
        if path in graph.file_index:
            file_bonus[graph.file_index[path]] = NAMED_FILE_BONUS * weight
    return ident_bonus, file_bonus


def score_rows(
    graph: RepoGraph, table: DefTable, ranks: FloatArray, mentions: Mentions
) -> FloatArray:
    file_rank = ranks[: len(graph.files)]
    is_def = table.node >= 0
    node = np.where(is_def, table.node, 0)
    flow = np.where(is_def, ranks[node] / table.ndef, 0.0)
    base = flow + np.where(is_def, UNREFERENCED_SHARE, FILE_ONLY_SHARE) * file_rank[table.fid]
    ident_bonus, file_bonus = _bonus_vectors(graph, mentions)
    base = base + np.where(is_def, ident_bonus[node] / table.ndef, 0.0)
    k = _within_file_rank(table.fid, base, table.line)
    score = base / (1.0 + k)
    return score + np.where(k < NAMED_FILE_TOP_DEFS, file_bonus[table.fid], 0.0)


def rank(
    graph: RepoGraph,
    table: DefTable,
    chat_files: Collection[str],
    recent_files: Collection[str],
    mentions: Mentions,
) -> Ranked:
    """Rank everything for one request (see module doc)."""
    pers = personalization(graph, chat_files, recent_files, mentions)
    ranks = personalized_pagerank(graph.n_nodes, graph.sources, graph.targets, graph.weights, pers)
    score = score_rows(graph, table, ranks, mentions)
    excluded = np.zeros(len(graph.files), dtype=bool)
    for path in chat_files:
        if path in graph.file_index:
            excluded[graph.file_index[path]] = True
    keep = np.flatnonzero(~excluded[table.fid])
    order = keep[np.lexsort((table.line[keep], table.fid[keep], -score[keep]))]
    file_rank = ranks[: len(graph.files)]
    total = float(file_rank.sum())
    normalised = file_rank / total if total > 0 else file_rank
    named = _named_files(graph, table, order, mentions)
    return Ranked(normalised, order, table, graph, named)


def _named_files(
    graph: RepoGraph, table: DefTable, order: IntArray, mentions: Mentions, limit: int = 5
) -> list[str]:
    """Files that carry a naming bonus, in rendering order (at most ``limit``)."""
    wanted = {graph.file_index[p] for p in mentions.files if p in graph.file_index}
    for name, weight in mentions.idents.items():
        if _gets_bonus(graph, name, weight):
            wanted.update(graph.definers[name])
    out: list[str] = []
    if not wanted:
        return out
    for row in order.tolist():
        fid = int(table.fid[row])
        if fid in wanted:
            wanted.discard(fid)
            out.append(graph.files[fid])
            if len(out) >= limit or not wanted:
                break
    return out
