"""Index one file against its cached row, parsing only when its content changed.

Rule: size and mtime equal to the cached row's -> trust the row without reading
the file; otherwise read and hash it, and only a changed hash means a parse (a
``touch`` costs a hash, not a parse). Binary files (NUL byte in the first
8 KiB) are remembered as such and left out of the map.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Literal, NamedTuple

from bonsai.services.fs.confined import ConfinementError, DirCursor, Workspace, path_order
from bonsai.services.repomap.cache import CachedFile, CacheRow
from bonsai.services.repomap.discovery import Candidate
from bonsai.services.repomap.languages import language_for_path
from bonsai.services.repomap.records import FileTags, decode_tags, encode_tags
from bonsai.services.repomap.tags import GrammarUnavailable, extract_tags

Extract = Callable[[str, bytes, str], FileTags]  # (path, bytes, language) -> tags

log = logging.getLogger(__name__)

Outcome = Literal["trusted", "hashed", "parsed", "shared", "skipped"]
SNIFF_BYTES = 8192


class FileResult(NamedTuple):
    path: str
    outcome: Outcome
    row: CacheRow | None  # row to write (None: nothing to write)
    tags: FileTags | None  # None: not part of the map (binary, unreadable), or "trusted"
    # (the cached row stands; its tags are decoded when needed)


class Reused(NamedTuple):
    """Tags the same bytes gave before, in another workspace (``shared_tags.py``)."""

    row: CacheRow
    tags: FileTags


Reuse = Callable[[str, str, int, int], Reused | None]  # (path, sha256, size, mtime_ns)


def _read(root: Path, rel: str, ws: Workspace | DirCursor | None = None) -> tuple[bytes, int, int]:
    """The file's bytes, opened confined to the workspace (never through a symlink
    out); through ``ws`` when given: a workspace already open, or a chunk's
    ``DirCursor`` (each directory opened once)."""
    if ws is None:
        with Workspace(root) as own:
            fd, _ = own.open_file(rel)
    elif isinstance(ws, DirCursor):
        fd = ws.open_file(rel)
    else:
        fd, _ = ws.open_file(rel)
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        return fh.read(), st.st_size, st.st_mtime_ns


def analyse(
    rel: str, data: bytes, size: int, mtime_ns: int, sha: str, extract: Extract = extract_tags
) -> tuple[CacheRow, FileTags | None]:
    """Tags of freshly read bytes, and the cache row to store them in
    (``extract``: the edit path's incremental parse, ``edit_parse.py``)."""
    if b"\0" in data[:SNIFF_BYTES]:
        return CacheRow(rel, CachedFile(size, mtime_ns, sha, "binary", "")), None
    language = language_for_path(rel)
    tags = FileTags(rel, None)
    if language is not None:
        try:
            tags = extract(rel, data, language)
        except GrammarUnavailable:
            tags = FileTags(rel, None)  # listed by path; languages.py logged why
    return CacheRow(rel, CachedFile(size, mtime_ns, sha, "tags", encode_tags(tags))), tags


def tags_of(row: CacheRow) -> FileTags | None:
    if row.file.status != "tags":
        return None
    if row.file.data is None:
        raise ValueError(f"repomap: {row.path}: cache row read without its tags")
    return decode_tags(row.path, row.file.data)


def index_file(
    root: Path,
    cand: Candidate,
    cached: CachedFile | None,
    decode: bool = True,
    ws: Workspace | DirCursor | None = None,
    extract: Extract = extract_tags,
) -> FileResult:
    """Update one file against its cached row (see module doc for the rule).
    Without ``decode`` a hashed file's tags are not decoded (a parse worker sends
    rows only); ``ws``: the workspace of ``root``, already open; ``extract``:
    makes a parsed file's tags (``analyse``)."""
    if cached is not None and (cached.size, cached.mtime_ns) == (cand.size, cand.mtime_ns):
        return FileResult(cand.path, "trusted", None, None)
    try:
        data, size, mtime_ns = _read(root, cand.path, ws)
    except (OSError, ConfinementError) as exc:
        log.warning("repomap: cannot read %s: %s", cand.path, exc)
        return FileResult(cand.path, "skipped", None, None)
    sha = hashlib.sha256(data).hexdigest()
    if cached is not None and cached.sha256 == sha:
        row = CacheRow(cand.path, cached._replace(size=size, mtime_ns=mtime_ns))
        return FileResult(cand.path, "hashed", row, tags_of(row) if decode else None)
    row, tags = analyse(cand.path, data, size, mtime_ns, sha, extract)
    return FileResult(cand.path, "parsed", row, tags)


def reuse_file(
    root: Path,
    cand: Candidate,
    cached: CachedFile | None,
    hashes: Collection[str],
    reuse: Reuse,
    ws: Workspace,
) -> FileResult | None:
    """The file indexed without a parse, if its bytes hash to its cached row's
    (``"hashed"``) or to one of ``hashes``, whose tags ``reuse`` gives
    (``"shared"``); None: it needs a parse (or cannot be read: its parse says so)."""
    try:
        data, size, mtime_ns = _read(root, cand.path, ws)
    except (OSError, ConfinementError):
        return None
    sha = hashlib.sha256(data).hexdigest()
    if cached is not None and cached.sha256 == sha:
        row = CacheRow(cand.path, cached._replace(size=size, mtime_ns=mtime_ns))
        return FileResult(cand.path, "hashed", row, tags_of(row))
    if sha not in hashes:
        return None
    found = reuse(cand.path, sha, size, mtime_ns)
    return None if found is None else FileResult(cand.path, "shared", found.row, found.tags)


def index_chunk(
    root: Path, chunk: Sequence[tuple[Candidate, CachedFile | None]], decode: bool = True
) -> list[FileResult]:
    """``index_file`` of each file of ``chunk`` (results in its order), opening
    the workspace once and reading the files grouped by directory, each
    directory opened once (``DirCursor``)."""
    try:
        ws = Workspace(root)
    except OSError:  # the root is gone: each file says so (a warning, "skipped")
        return [index_file(root, cand, row, decode) for cand, row in chunk]
    order = sorted(range(len(chunk)), key=lambda i: path_order(chunk[i][0].path))
    results: list[FileResult | None] = [None] * len(chunk)
    with ws, DirCursor(ws) as cursor:
        for i in order:
            cand, row = chunk[i]
            results[i] = index_file(root, cand, row, decode, cursor)
    return [r for r in results if r is not None]
