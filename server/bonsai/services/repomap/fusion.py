"""The file order of a map: lanes of evidence fused by reciprocal rank.

* **lexical**: BM25 of the text's words over each file's words (``lexical.py``:
  names, docstrings, comments, string literals, path), test files left out
  (the answer is rarely the test; their evidence for the code they exercise
  reaches the map through PageRank's teleport, ``ranking.lexical_signal``). A
  generated file (``words.is_generated``: its words are only its path and the
  names it defines) also gets ``SIBLING_SHARE`` of the score of the file it is
  named after in its directory (``cds_parsetab.py`` beside ``cds.py``): a fix
  to a grammar regenerates its table.
* **mentions**: what the text names (``mentions.py``): files (paths, modules,
  traceback frames) with their weight, identifiers with their weight split
  among the files defining them.
* **frames**: the files the text's traceback frames name, the innermost of
  the repository's own frames first (``frames.py``; an installed package's
  ``site-packages/pkg/mod.py`` names ``src/pkg/mod.py``).
* **title**: BM25 of the first line of a longer text (an issue's title) alone,
  tests left out, at a small weight (``W_TITLE``): it decides among files the
  body's many words match alike.
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

import re
from bisect import bisect_left
from typing import NamedTuple

import numpy as np

from bonsai.core.repomap.pagerank import FloatArray
from bonsai.services.repomap.frames import frames_lane
from bonsai.services.repomap.graph import RepoGraph
from bonsai.services.repomap.lexical import is_test_path, lexical_scores, query_of
from bonsai.services.repomap.mentions import Mentions
from bonsai.services.repomap.words import GENERATED_MARK, text_words

RRF_K = 10.0
W_LEXICAL = 1.0
W_MENTIONS = 1.0
W_PAGERANK = 0.3
NO_WORD_DAMP = 0.25  # PageRank lane weight of a file without a word of the text
NO_WORD_MIN = 0.0  # "without a word": BM25 at most this share of the best file's
SIBLING_SHARE = 0.5  # of its source file's lexical score, to a generated file
W_PHRASES = 0.0  # lane of the files holding every word of a message the text quotes
W_FRAMES = 2.0  # lane of the files the text's traceback frames name (``frames.py``)
W_TITLE = 0.3  # lane of BM25 over the first line of a longer text (an issue's title)
MAX_PHRASES = 8
MAX_TITLE = 400  # characters of a title read


class Lanes(NamedTuple):
    lexical: FloatArray  # per file id
    mentions: FloatArray
    pagerank: FloatArray
    bm25: FloatArray  # the raw BM25 (before test evidence), > 0: shares a word
    phrases: FloatArray  # words of quoted messages held (``phrases_lane``)
    frames: FloatArray  # traceback frames naming the file, innermost most (``frames.py``)
    title: FloatArray  # BM25 of the title's words (``title_lane``), tests left out


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
    return graph.postings.files_with([GENERATED_MARK])[GENERATED_MARK].tolist()


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


_SIBLINGS: list[tuple[object, list[int], list[tuple[int, int]]]] = []  # of the last graph


def generated_siblings(graph: RepoGraph) -> list[tuple[int, int]]:
    """(generated file, its source file) pairs, kept while the file list and the
    generated files stay the same (an edit keeps them)."""
    generated = generated_files(graph)
    if _SIBLINGS and _SIBLINGS[0][0] is graph.files and _SIBLINGS[0][1] == generated:
        return _SIBLINGS[0][2]
    pairs: list[tuple[int, int]] = []
    for fid in generated:
        source = source_sibling(graph, fid)
        if source is not None:
            pairs.append((fid, source))
    _SIBLINGS[:] = [(graph.files, generated, pairs)]
    return pairs


def lexical_lane(graph: RepoGraph, bm25: FloatArray) -> FloatArray:
    """BM25 per file, test files left out. (Handing the best test files' scores to
    the files defining the names they use was measured and dropped: a test uses the
    hub modules too, so its votes put them first; docs/repomap.md.)"""
    lane = np.where(test_mask(graph), 0.0, bm25)
    if SIBLING_SHARE > 0:
        for fid, source in generated_siblings(graph):
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


_QUOTED = re.compile(r"\"([^\"\n]{8,300})\"|'([^'\n]{8,300})'|`([^`\n]{8,300})`")
_MESSAGE = re.compile(
    r"^[ \t]*(?:[A-Za-z_.]{0,80}(?:Error|Exception|Warning)|ERROR|WARNING)\b:?[ \t]*(.{8,300})$",
    re.M,
)


def quoted_phrases(text: str) -> list[str]:
    """Messages the text quotes: strings in quotes or backticks with a space in
    them, and the message of an ``...Error:`` / ``WARNING`` line (first ones)."""
    found: list[str] = []
    for match in _QUOTED.finditer(text):
        phrase = next(g for g in match.groups() if g is not None)
        if " " in phrase.strip():
            found.append(phrase)
    found.extend(m.group(1) for m in _MESSAGE.finditer(text))
    return found[:MAX_PHRASES]


def phrases_lane(graph: RepoGraph, text: str) -> FloatArray:
    """Per file, the number of quoted phrases all of whose known words (at least
    two) it holds, each counted by its word count: a quoted error or log message
    is found in the file whose string literal it comes from."""
    core = graph.core
    lane = np.zeros(len(graph.files))
    if W_PHRASES <= 0 or not len(core.word_ids):
        return lane
    for phrase in quoted_phrases(text):
        ids = []
        for word in sorted(text_words(phrase)):
            i = bisect_left(core.words, word)
            if i < len(core.words) and core.words[i] == word:
                ids.append(i)
        if len(ids) < 2:
            continue
        hits = np.flatnonzero(np.isin(core.word_ids, np.asarray(ids, dtype=np.int64)))
        fids = np.searchsorted(core.word_offsets, hits, side="right") - 1
        count = np.bincount(fids, minlength=len(lane))
        lane += np.where(count >= len(ids), float(len(ids)), 0.0)
    return lane


def title_of(text: str) -> str:
    """The first non-blank line of a text of several lines (an issue's title),
    else nothing: a one-line text is all title, and its words are the lexical
    lane already."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[0].strip()[:MAX_TITLE] if len(lines) > 1 else ""


def title_lane(graph: RepoGraph, text: str, bm25: FloatArray) -> FloatArray:
    """BM25 of the title's words per file, tests left out: the title says what
    is wrong in a few words; the body's code, logs and environment dumps hold
    many more words, which the lexical lane weighs as much. Empty when the
    whole text's ``bm25`` is (no word matches, or the words are switched off)."""
    title = title_of(text) if W_TITLE > 0 and bm25.any() else ""
    if not title:
        return np.zeros(len(graph.files))
    scores = lexical_scores(graph.core, query_of(title), graph.postings)
    return np.where(test_mask(graph), 0.0, scores)


def lanes(
    graph: RepoGraph, mentions: Mentions, bm25: FloatArray, file_rank: FloatArray, text: str = ""
) -> Lanes:
    """The lanes from the text's BM25 per file, its mentions, the personalized
    PageRank of the files, the text's quoted messages, traceback frames and title."""
    lexical = lexical_lane(graph, bm25)
    zeros = np.zeros(len(graph.files))
    quoted = phrases_lane(graph, text) if text else zeros
    frames = frames_lane(graph.files, text, test_mask(graph)) if W_FRAMES > 0 else zeros
    title = title_lane(graph, text, bm25)
    return Lanes(lexical, mentions_lane(graph, mentions), file_rank, bm25, quoted, frames, title)


def _reciprocal(score: FloatArray) -> FloatArray:
    """1 / (RRF_K + position) for files scoring above zero (best first, ties by id)."""
    out = np.zeros(len(score))
    scored = np.flatnonzero(score > 0)
    if not len(scored):
        return out
    order = scored[np.lexsort((scored, -score[scored]))]
    out[order] = 1.0 / (RRF_K + 1.0 + np.arange(len(order)))
    return out


def fuse(lanes_: Lanes) -> FloatArray:
    """The fused file score (sums to 1), the map's file order."""
    prior = _reciprocal(lanes_.pagerank)
    if lanes_.bm25.any():
        matching = lanes_.bm25 > NO_WORD_MIN * float(lanes_.bm25.max())
        prior = np.where(matching, prior, NO_WORD_DAMP * prior)
    fused = (
        W_LEXICAL * _reciprocal(lanes_.lexical)
        + W_MENTIONS * _reciprocal(lanes_.mentions)
        + W_PAGERANK * prior
    )
    if W_PHRASES > 0:
        fused = fused + W_PHRASES * _reciprocal(lanes_.phrases)
    if W_FRAMES > 0:
        fused = fused + W_FRAMES * _reciprocal(lanes_.frames)
    if W_TITLE > 0:
        fused = fused + W_TITLE * _reciprocal(lanes_.title)
    total = float(fused.sum())
    return fused / total if total > 0 else fused
