"""The graph core of a cold build, made while its files are parsed.

``graph.build_core`` runs after the last file: it maps every reference, every
definition and every word of every file to an id in one pass, serially, while
both cores could be parsing. ``CoreStream.add`` does the per-file part as each
file's tags arrive — its segments, with names and words numbered in arrival
order, and the weights of the names it is the first to use — so what is left
after the last file is sorting the names and words and renumbering the
segments with two vector gathers. ``core`` returns exactly the arrays
``build_core`` gives for the same tags (same values, same dtypes), or None when
the tags it is asked for are not those it was given (an edit since, a file
trusted from the cache), and the caller builds the core as before.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from itertools import count
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from bonsai.core.repomap.pagerank import FloatArray, IntArray
from bonsai.services.repomap.graph import (
    BUILTIN_DAMPING,
    NO_NAME,
    PYTHON_BUILTINS,
    GraphCore,
    WordIds,
    is_specific,
)
from bonsai.services.repomap.indexer_core import FileResult
from bonsai.services.repomap.records import FileTags


class _Part(NamedTuple):
    """One file's segments, ids in arrival order."""

    tags: FileTags
    ref_names: IntArray
    ref_factor: FloatArray
    def_names: IntArray  # NO_NAME for a file without definitions
    def_lines: IntArray
    word_ids: IntArray


class _Numbering:
    """Strings numbered as they are first seen: each is offered the next value of
    one counter (``dict.setdefault`` over the items, in C), so a string's id is
    the counter's value when it was first met: unique, in arrival order, with
    gaps (``size`` bounds them)."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.size = 0  # every id is below this
        self.runs: list[str] = []  # every string, in sorted runs (one per batch)
        self._batch: list[str] = []  # the strings new in the current batch

    def number(self, items: Sequence[str]) -> tuple[IntArray, IntArray]:
        """Ids of ``items`` and the positions in ``items`` of the strings new to
        the numbering (each once)."""
        start, n = self.size, len(items)
        got = np.fromiter(map(self.ids.setdefault, items, count(start)), np.int64, n)
        self.size = start + n
        fresh = np.flatnonzero(got == np.arange(start, start + n, dtype=np.int64))
        if len(fresh):
            self._batch.extend(itemgetter_list(items, fresh))
        return got, fresh

    def end_batch(self) -> None:
        """Sort the batch's new strings into a run of their own: the final sort
        then merges runs (timsort) instead of sorting every string afresh."""
        self.runs.extend(sorted(self._batch))
        self._batch = []

    def sorted_ranks(self) -> tuple[list[str], IntArray, IntArray]:
        """The strings sorted, the id of each in that order, and each id's place
        in it (ids that no string has are never looked up)."""
        self.end_batch()
        strings = sorted(self.runs)
        by_string = np.fromiter(map(self.ids.__getitem__, strings), np.int64, len(strings))
        ranks = np.zeros(self.size, np.int64)
        ranks[by_string] = np.arange(len(strings), dtype=np.int64)
        return strings, by_string, ranks


def itemgetter_list(items: Sequence[str], positions: IntArray) -> list[str]:
    """``items`` at ``positions``."""
    return [items[i] for i in positions.tolist()]


class CoreStream:
    """Collects a build's tags as they are indexed (``add``, from any thread) and
    gives their ``GraphCore`` (``core``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._parts: dict[str, _Part] = {}
        self._names = _Numbering()
        self._words = _Numbering()
        self._weighed: list[int] = []  # ids of the names weighed, in arrival order
        self._factor: list[float] = []  # ... their factors
        self._specific: list[bool] = []
        self._twice = False  # a file added twice: its first tags' names would linger

    def add(self, results: Iterable[FileResult]) -> None:
        """Take the tags of freshly indexed files (others are ignored)."""
        with self._lock:
            for res in results:
                if res.tags is not None:
                    self._add(res.tags)
            self._names.end_batch()
            self._words.end_batch()

    def _add(self, tags: FileTags) -> None:
        """``graph.file_segments`` of the file with its names numbered (the same
        arithmetic, so the same bits)."""
        if tags.path in self._parts:
            self._twice = True
            return
        refs = tags.references
        ref_names = list(refs)
        ref_ids = self._number_names(ref_names)
        factor = np.sqrt(np.fromiter(refs.values(), np.float64, len(refs)))
        if tags.language == "python" and refs:
            builtin = np.fromiter(map(PYTHON_BUILTINS.__contains__, ref_names), bool, len(refs))
            factor = np.where(builtin, BUILTIN_DAMPING * factor, factor)
        defs = tags.definitions
        if defs:
            def_ids = self._number_names([d.name for d in defs])
            def_lines = np.fromiter((d.line for d in defs), np.int64, len(defs))
        else:  # the one row of a file without definitions
            def_ids = np.full(1, NO_NAME, np.int64)
            def_lines = np.zeros(1, np.int64)
        words, _ = self._words.number(tags.words)
        self._parts[tags.path] = _Part(tags, ref_ids, factor, def_ids, def_lines, words)

    def _number_names(self, names: list[str]) -> IntArray:
        """The ids of ``names``; the names new to the numbering are weighed."""
        ids, fresh = self._names.number(names)
        if len(fresh):
            new = itemgetter_list(names, fresh)
            specific = list(map(is_specific, new))
            self._weighed.extend(ids[fresh].tolist())
            self._specific.extend(specific)
            self._factor.extend(map(_name_factor, new, specific))
        return ids

    def core(self, tags: Mapping[str, FileTags]) -> GraphCore | None:
        """``build_core(tags)``, if ``tags`` are exactly the tags added (the same
        objects); else None."""
        with self._lock:
            parts = self._parts
            if self._twice or len(parts) != len(tags):
                return None
            files = sorted(tags)
            chosen = [parts.get(p) for p in files]
            if any(
                part is None or part.tags is not tags[p]
                for p, part in zip(files, chosen, strict=True)
            ):
                return None
            return self._assemble(files, [p for p in chosen if p is not None])

    def _assemble(self, files: list[str], parts: list[_Part]) -> GraphCore:
        names, by_name, name_rank = self._names.sorted_ranks()
        words, _, word_rank = self._words.sorted_ranks()
        refs = _joined([p.ref_names for p in parts], np.int64)
        defs = _joined([p.def_names for p in parts], np.int64)
        word_ids = _joined([p.word_ids for p in parts], np.int64)
        return GraphCore(
            files,
            names,
            _by_id(self._names.size, self._weighed, self._factor, np.float64)[by_name],
            _by_id(self._names.size, self._weighed, self._specific, bool)[by_name],
            _offsets([len(p.ref_names) for p in parts]),
            name_rank[refs],
            np.concatenate([np.zeros(0), *(p.ref_factor for p in parts)]),
            _offsets([len(p.def_names) for p in parts]),
            _def_ids(name_rank, defs),
            np.concatenate([np.zeros(0, np.int64), *(p.def_lines for p in parts)]),
            words,
            _offsets([len(p.word_ids) for p in parts]),
            _word_ids(word_rank, word_ids),
        )


def _name_factor(name: str, specific: bool) -> float:
    """``graph.name_factor(name)`` given ``is_specific(name)`` (one test of the
    name instead of two; the same arithmetic, so the same bits)."""
    weight = 1.0
    if len(name) >= 8 and specific:
        weight *= 10.0
    if name.startswith("_"):
        weight *= 0.1
    return weight


def _by_id(size: int, ids: list[int], values: list[Any], dtype: type) -> npt.NDArray[Any]:
    """``values`` placed at their ``ids`` in an array of ``size``."""
    out: npt.NDArray[Any] = np.zeros(size, dtype)
    out[np.asarray(ids, np.int64)] = np.asarray(values, dtype)
    return out


def _joined(arrays: list[IntArray], dtype: type) -> IntArray:
    return np.concatenate([np.zeros(0, dtype), *arrays])


def _def_ids(name_rank: IntArray, arrival: IntArray) -> IntArray:
    out = np.full(len(arrival), NO_NAME, np.int64)
    named = arrival >= 0
    out[named] = name_rank[arrival[named]]
    return out


def _word_ids(word_rank: IntArray, ids: IntArray) -> WordIds:
    return word_rank[ids].astype(np.int32)


def _offsets(sizes: list[int]) -> IntArray:
    return np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)]).astype(np.int64)
