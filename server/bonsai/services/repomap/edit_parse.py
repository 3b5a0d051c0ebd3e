"""The edited file's parse, incremental: the last tree of each of the last few
edited files is kept, and the file's next version is parsed from it.

An edit changes one span of a file (a function added, a line changed), so the
new bytes differ from the old ones between a common prefix and a common suffix.
That span is told to the old tree (``Tree.edit``) and the parser reuses every
subtree outside it (``Parser.parse(new, old_tree)``): the tree is the one a
fresh parse gives, at the cost of the changed region. The tags are then read
from it exactly as from a fresh parse (``tags.extract_tags``), so they are the
same (tested over random edit sequences).

Memory is bounded: at most ``KEEP_FILES`` files (least recently edited out
first), and no file over ``KEEP_MAX_BYTES`` (its tree is not kept). Only the
edit path uses this (``RepoMapService.update_paths``); a cold build parses each
file once and keeps nothing.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import NamedTuple

import tree_sitter as ts

from bonsai.services.repomap.records import FileTags
from bonsai.services.repomap.tags import extract_tags

KEEP_FILES = 8
KEEP_MAX_BYTES = 1 << 20


class _Kept(NamedTuple):
    language: str
    source: bytes
    tree: ts.Tree


def _common_prefix(a: bytes, b: bytes, limit: int) -> int:
    """Length of the longest common prefix of ``a`` and ``b``, at most ``limit``:
    a binary search over slice comparisons (each a ``memcmp``)."""
    lo, hi = 0, limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:  # the first ``lo`` bytes are known equal
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: bytes, b: bytes, limit: int) -> int:
    """Length of the longest common suffix, at most ``limit``."""
    lo, hi = 0, limit
    na, nb = len(a), len(b)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[na - mid : na - lo] == b[nb - mid : nb - lo]:
            lo = mid
        else:
            hi = mid - 1
    return lo


class ByteEdit(NamedTuple):
    """The one span where two versions differ: ``old[start:old_end]`` became
    ``new[start:new_end]``."""

    start: int
    old_end: int
    new_end: int


def byte_edit(old: bytes, new: bytes) -> ByteEdit:
    """The smallest single span edit turning ``old`` into ``new``."""
    shorter = min(len(old), len(new))
    start = _common_prefix(old, new, shorter)
    tail = _common_suffix(old, new, shorter - start)
    return ByteEdit(start, len(old) - tail, len(new) - tail)


def _point(source: bytes, offset: int) -> tuple[int, int]:
    """(row, column in bytes) of a byte offset, as tree-sitter counts them."""
    row = source.count(b"\n", 0, offset)
    return row, offset - (source.rfind(b"\n", 0, offset) + 1)


class EditTrees:
    """The kept trees and the edit path's tag extraction (``extract``)."""

    def __init__(self, keep_files: int = KEEP_FILES, keep_max_bytes: int = KEEP_MAX_BYTES) -> None:
        self._keep_files = keep_files
        self._keep_max_bytes = keep_max_bytes
        self._kept: OrderedDict[str, _Kept] = OrderedDict()
        self._lock = threading.Lock()
        self.reparsed = 0  # parses made from a kept tree (what the tests check)

    def __len__(self) -> int:
        return len(self._kept)

    def forget(self, path: str) -> None:
        with self._lock:
            self._kept.pop(path, None)

    def extract(self, path: str, source: bytes, language: str) -> FileTags:
        """``extract_tags`` of the file's new bytes, parsed from its kept tree
        when there is one."""
        with self._lock:
            kept = self._kept.pop(path, None)
        made: list[ts.Tree] = []

        def parse(parser: ts.Parser, data: bytes) -> ts.Tree:
            if kept is None or kept.language != language:
                tree = parser.parse(data)
            else:
                edit = byte_edit(kept.source, data)
                old = kept.tree
                old.edit(
                    edit.start,
                    edit.old_end,
                    edit.new_end,
                    _point(kept.source, edit.start),
                    _point(kept.source, edit.old_end),
                    _point(data, edit.new_end),
                )
                tree = parser.parse(data, old)
                self.reparsed += 1
            made.append(tree)
            return tree

        tags = extract_tags(path, source, language, parse)
        if made and len(source) <= self._keep_max_bytes:
            with self._lock:
                self._kept[path] = _Kept(language, source, made[0])
                while len(self._kept) > self._keep_files:
                    self._kept.popitem(last=False)
        return tags
