"""Score files by the words an issue shares with their text.

BM25 over word presence: each file is the set of its distinct stemmed words
(``words.py``: docstrings, comments, string literals, name parts, its path), an
issue is its stemmed words with their counts. A word that few files have (a
rare term of an error message, a domain word such as ``separability``) counts
most; a file's score is damped by how many distinct words it has, so a huge
module does not win by containing every word.

The result is deterministic and depends only on the core's per-file word
segments, never on word ids (a patched core may keep words nothing has any
more), so a patched, loaded and built graph score alike.
"""

from __future__ import annotations

import math
from bisect import bisect_left

import numpy as np

from bonsai.core.repomap.pagerank import FloatArray
from bonsai.services.repomap.graph import GraphCore
from bonsai.services.repomap.postings import Postings
from bonsai.services.repomap.words import text_words

_TEST_DIRS = frozenset({"test", "tests", "testing", "__tests__", "spec", "specs"})

K1 = 1.2
B = 0.3
MAX_QUERY_REPEAT = 3  # a word said five times counts like one said three times


def is_test_path(path: str) -> bool:
    """A test file by the common conventions of the languages the map reads."""
    parts = path.split("/")
    name = parts[-1]
    stem = name.rsplit(".", 1)[0]
    return (
        any(p in _TEST_DIRS for p in parts[:-1])
        or stem.startswith("test_")
        or stem.endswith(("_test", "_tests", ".test", ".spec", "_spec"))
        or stem in ("conftest", "tests")
        or (stem.startswith("Test") and len(stem) > 4 and stem[4].isupper())
        or (stem.endswith("Test") and len(stem) > 4)
    )


def query_of(text: str) -> dict[str, float]:
    """The text's words with their query weight (sqrt of the capped count)."""
    return {w: math.sqrt(min(n, MAX_QUERY_REPEAT)) for w, n in text_words(text).items()}


def lexical_scores(
    core: GraphCore, query: dict[str, float], postings: Postings | None = None
) -> FloatArray:
    """BM25 score per file id of ``core`` (zeros when nothing matches). With
    ``postings`` (of this core) only the query words' files are visited: the
    same scores, bit for bit, without a pass over every file's words."""
    n_files = len(core.files)
    scores = np.zeros(n_files)
    if not query or not len(core.word_ids):
        return scores
    if postings is not None:
        return _scores_from_postings(core, query, postings, scores)
    ids: list[int] = []
    weights: list[float] = []
    for word in sorted(query):
        i = bisect_left(core.words, word)
        if i < len(core.words) and core.words[i] == word:
            ids.append(i)
            weights.append(query[word])
    if not ids:
        return scores
    id_array = np.asarray(ids, dtype=np.int64)
    wanted = np.zeros(len(core.words), dtype=bool)
    wanted[id_array] = True
    hits = np.flatnonzero(wanted[core.word_ids])  # a table lookup: cheaper than np.isin
    if not len(hits):
        return scores
    hit_fid = np.searchsorted(core.word_offsets, hits, side="right") - 1
    slot = np.searchsorted(id_array, core.word_ids[hits])  # position in the query
    lengths, with_words, avg = _lengths(core)
    df = np.bincount(slot, minlength=len(ids)).astype(np.float64)
    idf = np.log1p((with_words - df + 0.5) / (df + 0.5))
    norm = K1 * (1.0 - B + B * lengths / max(avg, 1.0))
    contribution = idf[slot] * np.asarray(weights)[slot] * (K1 + 1.0) / (1.0 + norm[hit_fid])
    summed = np.bincount(hit_fid, weights=contribution, minlength=n_files)
    return np.asarray(summed, dtype=np.float64)


def _lengths(core: GraphCore) -> tuple[FloatArray, int, float]:
    """Each file's word count, how many files have words, and their mean length."""
    lengths = np.diff(core.word_offsets).astype(np.float64)
    with_words = int(np.count_nonzero(lengths))
    return lengths, with_words, float(lengths.sum()) / max(1, with_words)


def _scores_from_postings(
    core: GraphCore, query: dict[str, float], postings: Postings, scores: FloatArray
) -> FloatArray:
    """``lexical_scores`` from the query words' files: the same arithmetic in the
    same order (a file's terms are summed in word order, as the scan does)."""
    words = sorted(query)
    files = postings.files_with(words)
    held = [w for w in words if len(files[w])]
    if not held:
        return scores
    lengths, with_words, avg = _lengths(core)
    df = np.asarray([len(files[w]) for w in held], dtype=np.float64)
    idf = np.log1p((with_words - df + 0.5) / (df + 0.5))
    weights = np.asarray([query[w] for w in held])
    for k, word in enumerate(held):
        fids = files[word]
        norm = K1 * (1.0 - B + B * lengths[fids] / max(avg, 1.0))
        scores[fids] += idf[k] * weights[k] * (K1 + 1.0) / (1.0 + norm)
    return scores
