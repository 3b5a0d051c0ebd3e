"""SQLite (apsw) cache of extracted tags, one row per workspace file.

A row is keyed by (workspace, path) and remembers the file's size, mtime and
sha256 when it was parsed, so the indexer can trust a file whose stat is
unchanged, and re-hash (but not re-parse) a file that was only touched. The
cache is tagged with a fingerprint of the tag queries: changing a query empties
it instead of serving stale tags. A second table keeps one graph snapshot per
workspace (``graph_store.py``), so a warm start need not rebuild the graph;
a third, ``shared``, the tags of every (path, content) any workspace parsed,
for every other checkout of the same project (``shared_tags.py``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Literal, NamedTuple

from bonsai.services.repomap.queries import QUERIES

log = logging.getLogger(__name__)

SCHEMA_VERSION = 3  # 2: tags carry the file's words; 3: generated files' words
RowStatus = Literal["tags", "binary"]

_DDL = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
    workspace TEXT NOT NULL,
    path TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    status TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (workspace, path)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS graphs(
    workspace TEXT PRIMARY KEY,
    key TEXT NOT NULL,
    data BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS renders(
    workspace TEXT PRIMARY KEY,
    key TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS shared(
    path TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    used INTEGER NOT NULL,
    size INTEGER NOT NULL,
    crc INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (path, sha256)
) WITHOUT ROWID;
"""


class CachedFile(NamedTuple):
    size: int
    mtime_ns: int
    sha256: str
    status: RowStatus
    data: str | None  # encoded FileTags ("tags"), "" ("binary"); None: not loaded yet


class CacheRow(NamedTuple):
    path: str
    file: CachedFile


def cache_fingerprint() -> str:
    """Changes whenever the schema or any tag query changes."""
    digest = hashlib.sha256(str(SCHEMA_VERSION).encode())
    for name in sorted(QUERIES):
        digest.update(name.encode())
        # the definitions with their root-anchored part: the same text as when
        # they were one string (moving a pattern there changes no tag)
        digest.update((QUERIES[name].definitions + QUERIES[name].top_level).encode())
        digest.update(QUERIES[name].references.encode())
    return digest.hexdigest()[:16]


class TagCache:
    """Thread-safe wrapper around one apsw connection."""

    def __init__(self, db_path: Path) -> None:
        db_path.parent.mkdir(parents=True, exist_ok=True)
        self.path = db_path
        import apsw  # here: a parse worker needs only ``CachedFile``

        self._lock = threading.Lock()
        self._db = apsw.Connection(str(db_path))
        self._db.set_busy_timeout(5_000)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        with self._db:
            self._db.execute(_DDL)
            self._check_fingerprint()

    def _check_fingerprint(self) -> None:
        want = cache_fingerprint()
        row = self._db.execute("SELECT value FROM meta WHERE key='fingerprint'").fetchone()
        if row is None or row[0] != want:
            self._db.execute("DELETE FROM files")
            self._db.execute("DELETE FROM graphs")
            self._db.execute("DELETE FROM renders")
            self._db.execute("DELETE FROM shared")
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('fingerprint', ?)", (want,))

    def load(self, workspace: str, with_data: bool = True) -> dict[str, CachedFile]:
        """Every cached row of a workspace, by path; without ``with_data`` the
        encoded tags are left unloaded (``data`` None: see ``load_data``)."""
        column = "data" if with_data else "NULL"
        with self._lock:
            rows = self._db.execute(
                f"SELECT path, size, mtime_ns, sha256, status, {column} FROM files "
                "WHERE workspace=?",
                (workspace,),
            ).fetchall()
        out: dict[str, CachedFile] = {}
        for path, size, mtime_ns, sha, status, data in rows:
            text = None if data is None else str(data)
            out[str(path)] = CachedFile(int(size), int(mtime_ns), str(sha), status, text)  # type: ignore[arg-type]
        return out

    def load_data(self, workspace: str, paths: Iterable[str] | None = None) -> dict[str, str]:
        """The encoded tags of these paths (all when None), by path."""
        with self._lock:
            if paths is None:
                rows = self._db.execute(
                    "SELECT path, data FROM files WHERE workspace=?", (workspace,)
                ).fetchall()
            else:
                query = "SELECT path, data FROM files WHERE workspace=? AND path=?"
                rows = [
                    row for p in paths for row in self._db.execute(query, (workspace, p)).fetchall()
                ]
        return {str(path): str(data) for path, data in rows}

    def put_many(self, workspace: str, rows: Iterable[CacheRow]) -> None:
        """Write rows; a row whose data was never loaded updates only its stat."""
        rows = list(rows)
        full = [(workspace, r.path, *r.file) for r in rows if r.file.data is not None]
        stat = [
            (r.file.size, r.file.mtime_ns, workspace, r.path) for r in rows if r.file.data is None
        ]
        if not full and not stat:
            return
        with self._lock, self._db:
            if full:
                self._db.executemany(
                    "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?)", full
                )
            if stat:
                self._db.executemany(
                    "UPDATE files SET size=?, mtime_ns=? WHERE workspace=? AND path=?", stat
                )

    def delete_many(self, workspace: str, paths: Iterable[str]) -> None:
        params = [(workspace, p) for p in paths]
        if not params:
            return
        with self._lock, self._db:
            self._db.executemany("DELETE FROM files WHERE workspace=? AND path=?", params)

    def load_graph(self, workspace: str) -> tuple[str, bytes] | None:
        """The stored graph snapshot of a workspace: (key, blob), if any."""
        with self._lock:
            row = self._db.execute(
                "SELECT key, data FROM graphs WHERE workspace=?", (workspace,)
            ).fetchone()
        if row is None or not isinstance(row[1], bytes):
            return None
        return str(row[0]), row[1]

    def put_graph(self, workspace: str, key: str, data: bytes) -> None:
        with self._lock, self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO graphs VALUES (?, ?, ?)", (workspace, key, data)
            )

    def load_render(self, workspace: str, key: str) -> str | None:
        """The last map rendered from scratch for this workspace, if its inputs
        had ``key`` (one row per workspace: the store never grows)."""
        with self._lock:
            row = self._db.execute(
                "SELECT data FROM renders WHERE workspace=? AND key=?", (workspace, key)
            ).fetchone()
        return None if row is None else str(row[0])

    def put_render(self, workspace: str, key: str, data: str) -> None:
        with self._lock, self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO renders VALUES (?, ?, ?)", (workspace, key, data)
            )

    # -- tags shared by every workspace (shared_tags.py) ----------------------

    def shared_open(self, fingerprint: Callable[[], str]) -> bool:
        """Empty the shared entries if they were made by another extraction
        (``fingerprint``); False when they cannot be used (logged)."""
        import apsw

        want = fingerprint()
        try:
            with self._lock, self._db:
                row = self._db.execute(
                    "SELECT value FROM meta WHERE key='shared_fingerprint'"
                ).fetchone()
                if row is None or row[0] != want:
                    self._db.execute("DELETE FROM shared")
                    self._db.execute(
                        "INSERT OR REPLACE INTO meta VALUES ('shared_fingerprint', ?)", (want,)
                    )
        except apsw.Error as exc:
            log.warning("repomap: shared tags unusable: %s", exc)
            return False
        return True

    def shared_hashes(self, paths: Iterable[str]) -> dict[str, frozenset[str]]:
        """The content hashes with an entry, by path, for those of ``paths`` with one."""
        import apsw

        found: dict[str, set[str]] = {}
        try:
            with self._lock:
                rows = self._db.execute(
                    "SELECT path, sha256 FROM shared "
                    "WHERE path IN (SELECT value FROM json_each(?))",
                    (json.dumps(list(paths)),),
                ).fetchall()
        except apsw.Error as exc:
            log.warning("repomap: shared tags unreadable: %s", exc)
            return {}
        for path, sha in rows:
            found.setdefault(str(path), set()).add(str(sha))
        return {path: frozenset(shas) for path, shas in found.items()}

    def shared_entry(self, path: str, sha256: str) -> tuple[str, int] | None:
        """An entry's (data, crc), if there is one and it reads."""
        import apsw

        try:
            with self._lock:
                row = self._db.execute(
                    "SELECT data, crc FROM shared WHERE path=? AND sha256=?", (path, sha256)
                ).fetchone()
        except apsw.Error as exc:
            log.warning("repomap: shared tags of %s unreadable: %s", path, exc)
            return None
        if row is None or not isinstance(row[0], str) or not isinstance(row[1], int):
            return None
        return row[0], row[1]

    def shared_delete(self, keys: Iterable[tuple[str, str]]) -> None:
        import apsw

        try:
            with self._lock, self._db:
                self._db.executemany("DELETE FROM shared WHERE path=? AND sha256=?", list(keys))
        except apsw.Error as exc:
            log.warning("repomap: shared tags not deleted: %s", exc)

    def shared_put(
        self,
        fresh: list[tuple[str, str, str, int]],
        used: list[tuple[str, str]],
        max_bytes: int,
    ) -> None:
        """Store ``fresh`` entries (path, sha256, data, crc), mark ``used`` ones
        (path, sha256) as used now, then drop the least recently used entries
        until their data is at most ``max_bytes``, in one transaction."""
        import apsw

        now = time.time_ns()
        rows = [(p, sha, now, len(data), crc, data) for p, sha, data, crc in fresh]
        try:
            with self._lock, self._db:
                self._db.executemany(
                    "INSERT OR REPLACE INTO shared VALUES (?, ?, ?, ?, ?, ?)", rows
                )
                self._db.executemany(
                    "UPDATE shared SET used=? WHERE path=? AND sha256=?",
                    [(now, p, sha) for p, sha in used],
                )
                self._evict(max_bytes)
        except apsw.Error as exc:
            log.warning("repomap: shared tags not stored: %s", exc)

    def _evict(self, max_bytes: int) -> None:
        row = self._db.execute("SELECT coalesce(sum(size), 0) FROM shared").fetchone()
        total = int(row[0]) if row is not None else 0
        if total <= max_bytes:
            return
        goal = max_bytes * 9 // 10  # some room, so the next build does not evict again
        drop: list[tuple[str, str]] = []
        for path, sha, size in self._db.execute(
            "SELECT path, sha256, size FROM shared ORDER BY used, path, sha256"
        ).fetchall():
            if total <= goal:
                break
            drop.append((str(path), str(sha)))
            total -= size if isinstance(size, int) else 0
        self._db.executemany("DELETE FROM shared WHERE path=? AND sha256=?", drop)

    def close(self) -> None:
        with self._lock:
            self._db.close()
