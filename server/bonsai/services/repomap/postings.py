"""Which files hold a word: postings for the words a session has looked up.

The BM25 of a task's words (``lexical.py``) and the generated-file mark
(``fusion.py``) need, per word, the files whose word segment holds it. Scanning
every file's word ids for that costs a pass over the whole repository's words
on every request, and an edit changes the ids. Instead the files of each word
are found once (one pass for all the words of a request that are new to the
cache) and kept by the word itself, so they do not depend on word ids; a patch
moves the edited files in or out of each kept word's files (``patched``), at
the cost of the edited files and the kept words, never of the repository.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Collection, Iterable, Mapping
from typing import TYPE_CHECKING

import numpy as np

from bonsai.core.repomap.pagerank import IntArray

if TYPE_CHECKING:  # graph.py holds a Postings per view
    from bonsai.services.repomap.graph import GraphCore

_NONE: IntArray = np.zeros(0, dtype=np.int64)


class Postings:
    """Files (ascending ids of ``core.files``) holding each looked-up word; a
    word the core does not know maps to no files."""

    def __init__(self, core: GraphCore, found: dict[str, IntArray] | None = None) -> None:
        self.core = core
        self._found: dict[str, IntArray] = {} if found is None else found

    def files_with(self, words: Iterable[str]) -> dict[str, IntArray]:
        """The files of each of ``words`` (looked up together: one pass over the
        core's word ids for all the words not seen before)."""
        wanted = list(dict.fromkeys(words))
        missing = [w for w in wanted if w not in self._found]
        if missing:
            self._scan(missing)
        return {w: self._found[w] for w in wanted}

    def _scan(self, words: list[str]) -> None:
        core = self.core
        ids: list[int] = []
        known: list[str] = []
        for word in words:
            i = bisect_left(core.words, word)
            if i < len(core.words) and core.words[i] == word:
                ids.append(i)
                known.append(word)
            else:
                self._found[word] = _NONE
        if not ids:
            return
        slot_of = np.full(len(core.words), -1, dtype=np.int64)
        slot_of[ids] = np.arange(len(ids))
        slots = slot_of[core.word_ids]  # a table lookup: cheaper than np.isin
        hits = np.flatnonzero(slots >= 0)
        fids = np.searchsorted(core.word_offsets, hits, side="right") - 1
        order = np.argsort(slots[hits], kind="stable")  # by word, files ascending
        by_slot = np.bincount(slots[hits], minlength=len(ids))
        bounds = np.concatenate([[0], np.cumsum(by_slot)])
        grouped = fids[order]
        for k, word in enumerate(known):
            self._found[word] = grouped[bounds[k] : bounds[k + 1]]

    def patched(
        self, core: GraphCore, words_of: Mapping[str, Collection[str]], removed: Collection[str]
    ) -> Postings:
        """The postings for ``core``, patched from this one's ``self.core`` by
        edited (changed or new) files with these words and ``removed`` files:
        each kept word's files lose the edited and removed files and gain the
        edited files holding it. With the file list unchanged, a word whose
        files do not change keeps its array."""
        if not self._found:
            return Postings(core)
        if core.files is not self.core.files:
            return self._renumbered(core, words_of, removed)
        edits = [(self._fid(p), frozenset(ws)) for p, ws in words_of.items()]
        found: dict[str, IntArray] = {}
        for word, fids in self._found.items():
            for fid, words in edits:
                at = int(np.searchsorted(fids, fid))
                has = at < len(fids) and int(fids[at]) == fid
                if has and word not in words:
                    fids = np.delete(fids, at)
                elif not has and word in words:
                    fids = np.insert(fids, at, fid)
            found[word] = fids
        return Postings(core, found)

    def _renumbered(
        self, core: GraphCore, words_of: Mapping[str, Collection[str]], removed: Collection[str]
    ) -> Postings:
        """``patched`` for a new file list (files created or deleted): every kept
        word's files renumbered by path."""
        index = {p: i for i, p in enumerate(core.files)}
        old_to_new = np.array([index.get(p, -1) for p in self.core.files], dtype=np.int64)
        for path in [*words_of, *removed]:
            fid = self._fid(path)
            if fid >= 0:
                old_to_new[fid] = -1
        edited = [(index[p], frozenset(ws)) for p, ws in words_of.items()]
        found: dict[str, IntArray] = {}
        for word, fids in self._found.items():
            moved = old_to_new[fids]
            kept = moved[moved >= 0]
            gained = [fid for fid, words in edited if word in words]
            if gained:
                kept = np.sort(np.concatenate([kept, np.asarray(gained, dtype=np.int64)]))
            found[word] = kept.astype(np.int64, copy=False)
        return Postings(core, found)

    def _fid(self, path: str) -> int:
        files = self.core.files
        i = bisect_left(files, path)
        return i if i < len(files) and files[i] == path else -1
