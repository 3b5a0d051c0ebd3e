"""Tags shared by every checkout of a project: a cold build that was done before.

Users keep several clones and git worktrees of one project (agents make
worktrees all the time), and each one's first build parsed every file again.
The tag cache is per user (one database for every workspace), so it also keeps
one entry per (path, content): the encoded tags that the file's bytes gave.
A build reads and hashes a file whose path has an entry (it reads and hashes
every file it indexes anyway: no trust in a git index or a stat), and an
entry with that very hash gives the tags without a parse. A second worktree at
the same commit parses nothing; at a nearby commit, only the files that differ.

Hostile-repository safe:

* an entry is a pure function of its key: the path (tags carry the path's
  words and the language its extension gives), the sha256 of the bytes read,
  and the extraction's version (``shared_fingerprint``: the queries, the
  schema, the tree-sitter and grammar versions). Another checkout can only add
  the tags its own bytes give, never the tags of bytes it does not have;
* an entry carries a CRC-32 of its key and data, and its tags are checked for
  shape when decoded; one that fails either is deleted and the file parsed;
* the entries are bounded (``SHARED_MAX_BYTES`` of encoded tags); the least
  recently used go first. Writes are SQLite transactions (atomic).
"""

from __future__ import annotations

import functools
import hashlib
import logging
import threading
import zlib
from collections.abc import Iterable
from importlib import metadata
from operator import itemgetter

from bonsai.services.repomap.cache import CachedFile, CacheRow, TagCache, cache_fingerprint
from bonsai.services.repomap.indexer import Shared
from bonsai.services.repomap.indexer_core import FileResult, Reused
from bonsai.services.repomap.languages import WHEELS, language_for_path
from bonsai.services.repomap.records import FileTags, decode_tags

log = logging.getLogger(__name__)

SHARED_MAX_BYTES = 256 * 1024 * 1024  # encoded tags kept for every checkout together
_PACKAGES = ("tree-sitter", "tree-sitter-language-pack")


@functools.cache
def shared_fingerprint() -> str:
    """The extraction's version: what an entry is a function of besides its key."""
    digest = hashlib.sha256(cache_fingerprint().encode())
    names = sorted({*_PACKAGES, *(m.replace("_", "-") for m, _ in WHEELS.values())})
    for name in names:
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = "-"
        digest.update(f"{name}={version};".encode())
    return digest.hexdigest()[:16]


def entry_check(path: str, sha256: str, data: str) -> int:
    """The CRC-32 an entry is stored with (of its key and its data)."""
    return zlib.crc32(f"{path}\0{sha256}\0{data}".encode())


def _shaped(path: str, tags: FileTags) -> bool:
    """Tags as ``extract_tags`` makes them for this path (types and language;
    a path without a tag language is listed by path only). Checked in C-level
    passes (``join`` takes only strings, a ``sum`` of ints is an int); a
    definition's five fields are checked by ``Definition._make`` in decoding."""
    if tags.language != language_for_path(path) or not isinstance(tags.references, dict):
        return False
    defs = tags.definitions
    try:
        "".join(tags.words)
        "".join(tags.references)
        for field in (0, 1, 3):
            "".join(map(itemgetter(field), defs))
        counts = (sum(tags.references.values()), *(sum(map(itemgetter(f), defs)) for f in (2, 4)))
    except TypeError:
        return False
    return all(type(n) is int for n in counts)


_writes_lock = threading.Lock()
_writes: dict[str, threading.Thread] = {}  # by database: the last write started


def wait_for_writes(db: str) -> None:
    """Until the shared-tag writes this process started on database ``db`` are done."""
    with _writes_lock:
        last = _writes.get(db)
    if last is not None:
        last.join()


class SharedTags:
    """The shared entries of one tag cache, as one build uses them: which of
    its paths have entries (``known``), an entry's tags (``get``), and, after
    the build, its new entries and the entries it used (``record``)."""

    def __init__(self, cache: TagCache, max_bytes: int = SHARED_MAX_BYTES) -> None:
        self._cache = cache
        self._max_bytes = max_bytes
        self._ready = False

    def _prepare(self) -> bool:
        if not self._ready:
            self._ready = self._cache.shared_open(shared_fingerprint)
        return self._ready

    def known(self, paths: Iterable[str]) -> dict[str, frozenset[str]]:
        """The content hashes with an entry, for each of ``paths`` that has one
        (after the writes this process started on the same database)."""
        self.wait()
        if not self._prepare():
            return {}
        return self._cache.shared_hashes(paths)

    def lookup(self) -> Shared:
        """What ``indexer.index_files`` looks shared tags up with."""
        return Shared(self.known, self.get)

    def get(self, path: str, sha256: str, size: int, mtime_ns: int) -> Reused | None:
        """The tags of ``path`` whose bytes hash to ``sha256``, as this
        workspace's row (with its size and mtime), if an entry is sound."""
        found = self._cache.shared_entry(path, sha256)
        if found is None:
            return None
        data, check = found
        tags = None
        if entry_check(path, sha256, data) == check:
            try:
                tags = decode_tags(path, data)
            except (ValueError, TypeError):
                tags = None
            if tags is not None and not _shaped(path, tags):
                tags = None
        if tags is None:
            log.warning("repomap: shared tags of %s (%s) damaged; parsing it", path, sha256[:12])
            self._cache.shared_delete([(path, sha256)])
            return None
        return Reused(CacheRow(path, CachedFile(size, mtime_ns, sha256, "tags", data)), tags)

    def record_soon(self, results: Iterable[FileResult]) -> None:
        """``record`` on a thread of its own, after this process's earlier writes
        to the same database: a cold build's caller goes on to its map meanwhile
        (~0.08 s of CPU for sympy's 1,883 files). Not a daemon thread: a process
        that exits first waits for it."""
        batch = list(results)
        db = str(self._cache.path)
        with _writes_lock:
            before = _writes.get(db)
            thread = threading.Thread(
                target=self._record_after, args=(before, batch), name="repomap-shared-tags"
            )
            _writes[db] = thread
            thread.start()

    def _record_after(self, before: threading.Thread | None, batch: list[FileResult]) -> None:
        if before is not None:
            before.join()
        try:
            self.record(batch)
        except Exception:  # shared tags are an aid: never a failed build
            log.exception("repomap: shared tags not stored")

    def wait(self) -> None:
        """Until the writes this process started on this database are done."""
        wait_for_writes(str(self._cache.path))

    def record(self, results: Iterable[FileResult]) -> None:
        """Add an entry for each file a build parsed (with a grammar), mark the
        entries it used as recent, and evict the least recently used beyond the
        bound."""
        fresh: list[tuple[str, str, str, int]] = []
        used: list[tuple[str, str]] = []
        for res in results:
            if res.row is None or res.tags is None or res.row.file.data is None:
                continue
            if res.outcome == "shared":
                used.append((res.path, res.row.file.sha256))
            elif res.outcome == "parsed" and res.tags.language == language_for_path(res.path):
                # (not tags made without the grammar the path needs: it may load elsewhere)
                sha, data = res.row.file.sha256, res.row.file.data
                fresh.append((res.path, sha, data, entry_check(res.path, sha, data)))
        if (fresh or used) and self._prepare():
            self._cache.shared_put(fresh, used, self._max_bytes)
