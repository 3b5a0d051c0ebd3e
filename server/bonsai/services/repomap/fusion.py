"""The file order of a map: three lanes of evidence fused by reciprocal rank.

* **lexical**: BM25 of the text's words over each file's words (``lexical.py``:
  names, docstrings, comments, string literals, path). A test file's score is
  handed to the files defining the names it uses (a test that matches the issue
  is evidence for the code it exercises; the answer is rarely the test). A
  generated file (``words.is_generated``: its words are only its path and the
  names it defines) also gets ``SIBLING_SHARE`` of the score of the file it is
  named after in its directory (``cds_parsetab.py`` beside ``cds.py``): a fix
  to a grammar regenerates its table.
* **mentions**: what the text names (``mentions.py``): files (paths, modules,
  traceback frames) with their weight, identifiers with their weight split
  among the files defining them.
* **pagerank**: the personalized PageRank of the reference graph, a prior of
  importance; for a file that shares no word with the text it is damped by
  ``NO_WORD_DAMP``, so a large central module no longer leads a map it has
  nothing to do with.

Each lane ranks the files it scores above zero (ties by path); a file's fused
score is ``sum(weight / (RRF_K + position))`` over the lanes that rank it.
Reciprocal-rank fusion needs no calibration between lanes whose scores live on
unrelated scales, and a file must be well placed in one lane or fairly placed
in several to lead. Everything is vectorised over files; deterministic.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import NamedTuple

import numpy as np

from bonsai.core.repomap.pagerank import FloatArray
from bonsai.services.repomap.graph import RepoGraph
from bonsai.services.repomap.lexical import is_test_path
from bonsai.services.repomap.mentions import Mentions
from bonsai.services.repomap.words import GENERATED_MARK

RRF_K = 10.0
W_LEXICAL = 1.0
W_MENTIONS = 1.0
W_PAGERANK = 0.3
NO_WORD_DAMP = 0.25  # PageRank lane weight of a file without a word of the text
NO_WORD_MIN = 0.0  # "without a word": BM25 at most this share of the best file's
EVIDENCE_TOP = 20  # best-scoring test files whose score is handed on
EVIDENCE_SHARE = 0.0  # of a test file's score, the part handed on (measured: 0 is best)
TEST_FILE_DAMP = 1.0  # a test file's fused score, times this
SIBLING_SHARE = 0.5  # of its source file's lexical score, to a generated file
EVIDENCE_MODE = "uses"  # "uses": to every definer; "matching": only those sharing words
FUSION_MODE = "rrf"  # "rrf": reciprocal rank; "mix": scores scaled to the lane's best


class Lanes(NamedTuple):
    lexical: FloatArray  # per file id
    mentions: FloatArray
    pagerank: FloatArray
    bm25: FloatArray  # the raw BM25 (before test evidence), > 0: shares a word


def _definers_of_nodes(graph: RepoGraph, nodes: np.ndarray, weights: FloatArray) -> FloatArray:
    """Spread ``weights`` on identifier ``nodes`` evenly over their definers."""
    out = np.zeros(len(graph.files))
    if not len(nodes):
        return out
    def_src = graph.sources[graph.n_ref_edges :]  # identifier nodes, ascending
    def_dst = graph.targets[graph.n_ref_edges :]
    lo = np.searchsorted(def_src, nodes, side="left")
    hi = np.searchsorted(def_src, nodes, side="right")
    count = hi - lo
    keep = count > 0
    lo, count, w = lo[keep], count[keep], weights[keep]
    if not len(lo):
        return out
    first = np.repeat(np.cumsum(count) - count, count)  # each run's start in the output
    idx = np.repeat(lo, count) + np.arange(int(count.sum())) - first
    np.add.at(out, def_dst[idx], np.repeat(w / count, count))
    return out


_TEST_MASK: list[tuple[list[str], np.ndarray]] = []  # (files, mask) of the last graph


def test_mask(graph: RepoGraph) -> np.ndarray:
    """Which files are tests (``lexical.is_test_path``), kept while the file list
    stays the same object (an edit keeps it), so an edit does not redo it."""
    if _TEST_MASK and _TEST_MASK[0][0] is graph.files:
        return _TEST_MASK[0][1]
    mask = np.fromiter((is_test_path(p) for p in graph.files), bool, len(graph.files))
    _TEST_MASK[:] = [(graph.files, mask)]
    return mask


def generated_files(graph: RepoGraph) -> list[int]:
    """Ids of the files marked generated (``words.GENERATED_MARK``), ascending."""
    core = graph.core
    i = bisect_left(core.words, GENERATED_MARK)
    if i >= len(core.words) or core.words[i] != GENERATED_MARK:
        return []
    at = np.flatnonzero(core.word_ids == i)
    fids = np.searchsorted(core.word_offsets, at, side="right") - 1
    return sorted(set(fids.tolist()))


def source_sibling(graph: RepoGraph, fid: int) -> int | None:
    """The file a generated file is named after: the longest stem prefix (cut at
    ``_``, ``-`` or ``.``) with the same extension in the same directory."""
    path = graph.files[fid]
    folder, _, name = path.rpartition("/")
    stem_, dot, ext = name.rpartition(".")
    if not dot:
        stem_, ext = name, ""
    prefix = folder + "/" if folder else ""
    for cut in range(len(stem_) - 1, 0, -1):
        if stem_[cut] in "_-.":
            other = graph.file_index.get(prefix + stem_[:cut] + dot + ext)
            if other is not None and other != fid:
                return other
    return None


def lexical_lane(graph: RepoGraph, bm25: FloatArray) -> FloatArray:
    """BM25 per file, with the best test files' scores handed to the files
    defining the names they use (split by their reference weights)."""
    lane = bm25.copy()
    is_test = test_mask(graph)
    tests = np.flatnonzero((bm25 > 0) & is_test).tolist()
    tests.sort(key=lambda f: (-float(bm25[f]), f))
    for fid in tests:
        lane[fid] = 0.0
    for fid in tests[:EVIDENCE_TOP]:
        targets, edge_w = graph.uses_of(fid)
        total = float(edge_w.sum())
        if len(targets) and total > 0:
            vote = EVIDENCE_SHARE * float(bm25[fid]) * edge_w / total
            spread = _definers_of_nodes(graph, targets, vote)
            if EVIDENCE_MODE == "matching":
                spread = np.where(bm25 > 0, spread, 0.0)
            lane += spread
    if SIBLING_SHARE > 0:
        generated = generated_files(graph)
        for fid in generated:
            source = source_sibling(graph, fid)
            if source is not None:
                lane[fid] = max(lane[fid], SIBLING_SHARE * float(lane[source]))
    return lane


def mentions_lane(graph: RepoGraph, mentions: Mentions) -> FloatArray:
    lane = np.zeros(len(graph.files))
    for path, weight in mentions.files.items():
        fid = graph.file_index.get(path)
        if fid is not None:
            lane[fid] += weight
    nodes: list[int] = []
    weights: list[float] = []
    for name, weight in sorted(mentions.idents.items()):
        node = graph.node(name)
        if node is not None:
            nodes.append(node)
            weights.append(weight)
    if nodes:
        lane += _definers_of_nodes(graph, np.asarray(nodes), np.asarray(weights))
    return lane


def lanes(graph: RepoGraph, mentions: Mentions, bm25: FloatArray, file_rank: FloatArray) -> Lanes:
    """The three lanes from the text's BM25 per file, its mentions and the
    personalized PageRank of the files."""
    return Lanes(lexical_lane(graph, bm25), mentions_lane(graph, mentions), file_rank, bm25)


def _reciprocal(score: FloatArray) -> FloatArray:
    """1 / (RRF_K + position) for files scoring above zero (best first, ties by id)."""
    out = np.zeros(len(score))
    scored = np.flatnonzero(score > 0)
    if not len(scored):
        return out
    order = scored[np.lexsort((scored, -score[scored]))]
    out[order] = 1.0 / (RRF_K + 1.0 + np.arange(len(order)))
    return out


def _scaled(score: FloatArray) -> FloatArray:
    best = float(score.max()) if len(score) else 0.0
    return score / best if best > 0 else score


def fuse(graph: RepoGraph, lanes_: Lanes) -> FloatArray:
    """The fused file score (sums to 1), the map's file order."""
    if FUSION_MODE == "mix":
        fused = (
            W_LEXICAL * _scaled(lanes_.lexical)
            + W_MENTIONS * _scaled(lanes_.mentions)
            + W_PAGERANK * np.where(lanes_.bm25 > 0, 1.0, NO_WORD_DAMP) * _scaled(lanes_.pagerank)
        )
        total = float(fused.sum())
        return fused / total if total > 0 else fused
    prior = _reciprocal(lanes_.pagerank)
    if lanes_.bm25.any():
        matching = lanes_.bm25 > NO_WORD_MIN * float(lanes_.bm25.max())
        prior = np.where(matching, prior, NO_WORD_DAMP * prior)
    fused = (
        W_LEXICAL * _reciprocal(lanes_.lexical)
        + W_MENTIONS * _reciprocal(lanes_.mentions)
        + W_PAGERANK * prior
    )
    if TEST_FILE_DAMP != 1.0:
        fused = np.where(test_mask(graph), TEST_FILE_DAMP * fused, fused)
    total = float(fused.sum())
    return fused / total if total > 0 else fused
