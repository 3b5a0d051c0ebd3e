"""Render ranked repository-map entries as text fitted to a token budget.

Pure: the caller passes the ranked entries and a ``count_tokens(text) -> int``
callable; no I/O. The output depends only on the *set* of included entries, so
identical inputs give byte-identical text and a re-ranking that keeps the same
entries keeps the same bytes (the map sits in the cacheable prompt prefix).

Format, one block per file in path order (or the given order: the service
puts the best-ranked file first, so the same entries keep the same bytes
while the files' ranking keeps its order)::

    pkg/module.py:
    │class Parser:
    │  def parse(self, text: str) -> Tree:
    docs/notes.txt

Definitions are ordered by line and indented two spaces per nesting level; a
file included without definitions is a bare path line.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from bonsai.shown_names import shown_name

MAX_LINE_CHARS = 100
GUTTER = "│"


class MapTag(NamedTuple):
    """One definition as shown in the map."""

    line: int
    signature: str
    depth: int = 0


class MapEntry(NamedTuple):
    """One ranked item: a definition in a file, or a file on its own (tag None)."""

    path: str
    tag: MapTag | None = None


class FittedMap(NamedTuple):
    text: str
    tokens: int
    entries: int  # how many of the ranked entries (a prefix) were included


def _clip(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[: MAX_LINE_CHARS - 1] + "…"


def render_entries(entries: Sequence[MapEntry], order: Callable[[str], Any] | None = None) -> str:
    """Render entries grouped by file (tags by line, deduplicated); files in
    path order, or sorted by ``order(path)`` (the service passes the ranking)."""
    by_path: dict[str, set[MapTag]] = {}
    for entry in entries:
        tags = by_path.setdefault(entry.path, set())
        if entry.tag is not None:
            tags.add(entry.tag)
    lines: list[str] = []
    for path in sorted(by_path, key=order):
        tags = by_path[path]
        if not tags:
            lines.append(_clip(shown_name(path)))
            continue
        lines.append(_clip(shown_name(path) + ":"))
        for tag in sorted(tags):
            lines.append(_clip(GUTTER + "  " * tag.depth + tag.signature))
    return "\n".join(lines) + "\n" if lines else ""


def _block(path: str, tags: set[MapTag]) -> str:
    """One file's lines as ``render_entries`` writes them, each ending in a newline."""
    if not tags:
        return _clip(shown_name(path)) + "\n"
    lines = [_clip(shown_name(path) + ":")]
    lines += [_clip(GUTTER + "  " * tag.depth + tag.signature) for tag in sorted(tags)]
    return "\n".join(lines) + "\n"


class _Prefixes:
    """``render_entries`` of prefixes of one entry list, for the fit's probes: a
    file's block depends only on how many of its entries the prefix holds, so
    each (file, count) is rendered once however many probes show it, and a
    probe joins the blocks of its files in order. Entries are read only as far
    as a probe reaches."""

    def __init__(self, entries: Sequence[MapEntry], order: Callable[[str], Any] | None) -> None:
        self._entries = entries
        self._order = order
        self._read = 0
        self._first: list[tuple[int, str]] = []  # (index of a file's first entry, file)
        self._at: dict[str, list[int]] = {}  # file -> indices of its entries
        self._tags: dict[str, list[MapTag | None]] = {}  # file -> their tags
        self._blocks: dict[tuple[str, int], str] = {}

    def _read_to(self, k: int) -> None:
        if k <= self._read:
            return
        for i, entry in enumerate(self._entries[self._read : k], self._read):
            at = self._at.get(entry.path)
            if at is None:
                at = self._at[entry.path] = []
                self._tags[entry.path] = []
                self._first.append((i, entry.path))
            at.append(i)
            self._tags[entry.path].append(entry.tag)
        self._read = k

    def text(self, k: int) -> str:
        """``render_entries(entries[:k], order)``."""
        self._read_to(k)
        paths = [path for i, path in self._first[: bisect_left(self._first, (k, ""))]]
        parts = []
        for path in sorted(paths, key=self._order):
            count = bisect_left(self._at[path], k)
            block = self._blocks.get((path, count))
            if block is None:
                tags = {t for t in self._tags[path][:count] if t is not None}
                block = self._blocks[path, count] = _block(path, tags)
            parts.append(block)
        return "".join(parts)


def fit_entries(
    entries: Sequence[MapEntry],
    budget: int,
    count_tokens: Callable[[str], int],
    order: Callable[[str], Any] | None = None,
) -> FittedMap:
    """Largest prefix of ``entries`` whose rendering costs at most ``budget`` tokens.

    Galloping then binary search, so every probe renders text near the budget
    size instead of the whole repository; the probes share the blocks of the
    files whose entries they hold alike (``_Prefixes``). Assumes cost grows with
    the prefix (it does: a longer prefix renders a superset of lines).
    """
    if budget <= 0 or not entries:
        return FittedMap("", 0, 0)
    cache: dict[int, tuple[str, int]] = {0: ("", 0)}
    prefixes = _Prefixes(entries, order)

    def cost(k: int) -> int:
        if k not in cache:
            text = prefixes.text(k)
            cache[k] = (text, count_tokens(text))
        return cache[k][1]

    n = len(entries)
    lo, hi = 0, min(n, max(1, budget // 16))
    while cost(hi) <= budget:
        if hi == n:
            text, tokens = cache[n]
            return FittedMap(text, tokens, n)
        lo, hi = hi, min(n, hi * 2)
    # invariant: cost(lo) <= budget < cost(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if cost(mid) <= budget:
            lo = mid
        else:
            hi = mid
    text, tokens = cache[lo]
    return FittedMap(text, tokens, lo)
