"""What was committed, known independently of the database: ``bonsai.commit``.

A fixed-size record beside ``bonsai.db`` holds how many messages the
database has acknowledged. It is rewritten in place through a shared memory
map (a store of 256 bytes, well under a microsecond: no system call) after
every append commits and *before* a deletion commits, so
at every instant ``record.messages <= messages in the database`` unless the
database lost data. A ``kill -9`` cannot lose it (the page cache outlives the
process, as it does for the WAL's own writes). Against power loss the daemon
fsyncs it off the event loop at most every five seconds while it changes
(:meth:`CommitRecord.sync_if_dirty`), at each backup and at a clean stop; an
fsync never sits in the commit path, where on a busy disk it costs
milliseconds.

**Invariant:** a database holding fewer messages than its record says was
damaged (a truncated or deleted file, a shortened, flipped or deleted WAL);
the daemon refuses to start over it instead of silently carrying on.
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import time
from dataclasses import dataclass
from pathlib import Path

import apsw

RECORD_SIZE = 256
SYNC_EVERY_S = 5.0  # the daemon fsyncs a changed record this often, off the loop
VERSION = 1


class RecordUnreadable(Exception):
    """``bonsai.commit`` exists but does not hold a record this bonsai can read."""


@dataclass(frozen=True)
class Committed:
    messages: int
    updated_at: float


def record_path(db_path: Path) -> Path:
    return db_path.with_name(db_path.name.removesuffix(".db") + ".commit")


def read_record(db_path: Path) -> Committed | None:
    """The record beside ``db_path``; None when there is none. Raises RecordUnreadable."""
    path = record_path(db_path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        data = json.loads(raw.rstrip(b"\0 \n").decode("utf-8"))
        if data.get("v") != VERSION:
            raise ValueError(f"version {data.get('v')!r}")
        return Committed(messages=int(data["messages"]), updated_at=float(data["at"]))
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise RecordUnreadable(f"{path} is not a commit record ({error})") from None


def _payload(messages: int) -> bytes:
    text = f'{{"v": {VERSION}, "messages": {messages}, "at": {time.time():.3f}}}'
    return text.encode().ljust(RECORD_SIZE - 1, b" ") + b"\n"


class CommitRecord:
    """The open record of one live database (one writer: the daemon holding the lock)."""

    def __init__(self, path: Path, messages: int) -> None:
        self.path = path
        self.messages = messages
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        self._fd = os.open(path, flags, 0o600)
        os.ftruncate(self._fd, RECORD_SIZE)
        self._map = mmap.mmap(self._fd, RECORD_SIZE)
        self.dirty = False
        self._write(sync=True)

    def _write(self, sync: bool = False) -> None:
        self._map[0:RECORD_SIZE] = _payload(self.messages)
        self.dirty = True
        if sync:
            self.sync()

    def added(self, count: int) -> None:
        """After an append committed: the database acknowledged ``count`` more messages."""
        self.messages += count
        self._write()

    def removing(self, count: int) -> None:
        """Before a deletion commits: lower the floor first, so it never exceeds the truth."""
        self.messages = max(0, self.messages - count)
        self._write()

    def reset(self, messages: int) -> None:
        self.messages = messages
        self._write(sync=True)

    def sync(self) -> None:
        self.dirty = False
        self._map.flush()
        os.fsync(self._fd)

    def sync_if_dirty(self) -> None:
        """For a worker thread, every few seconds: make the record durable against power loss."""
        if self.dirty:
            self.sync()

    def close(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.sync()
        with contextlib.suppress(OSError, ValueError):
            self._map.close()
            os.close(self._fd)


# the record of each live connection (a connection without one keeps no record:
# tests, importers and tools that open a database of their own)
_records: dict[int, CommitRecord] = {}
_pending: dict[int, int] = {}
AUTOCHECKPOINT_PAGES = 1000  # SQLite's default, which a WAL hook of our own replaces


def attach(conn: apsw.Connection, db_path: Path) -> CommitRecord:
    """Start keeping the record for ``conn`` from its current message count.

    Counts noted inside a transaction are written when SQLite reports the
    commit (its WAL hook) and dropped when the transaction rolls back.
    """
    key = id(conn)
    record = CommitRecord(record_path(db_path), count_messages(conn))
    _records[key] = record
    _pending[key] = 0

    def committed(connection: apsw.Connection, _name: str, pages: int) -> int:
        added = _pending.get(key, 0)
        if added:
            _pending[key] = 0
            record.added(added)
        if pages >= AUTOCHECKPOINT_PAGES:
            connection.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_PASSIVE)
        return apsw.SQLITE_OK

    def rolled_back() -> None:
        _pending[key] = 0

    conn.set_wal_hook(committed)
    conn.set_rollback_hook(rolled_back)
    return record


def detach(conn: apsw.Connection) -> None:
    key = id(conn)
    record = _records.pop(key, None)
    _pending.pop(key, None)
    if record is not None:
        conn.set_wal_hook(None)
        conn.set_rollback_hook(None)
        conn.wal_autocheckpoint(AUTOCHECKPOINT_PAGES)
        record.close()


def record_of(conn: apsw.Connection) -> CommitRecord | None:
    return _records.get(id(conn))


def note_added(conn: apsw.Connection, count: int) -> None:
    """``count`` messages were inserted; the record counts them once their commit lands."""
    key = id(conn)
    if key in _pending and count:
        _pending[key] += count
        if not conn.in_transaction:  # already committed (autocommit)
            _records[key].added(_pending[key])
            _pending[key] = 0


def note_removing(conn: apsw.Connection, count: int) -> None:
    """Call before a deletion of ``count`` messages commits."""
    record = _records.get(id(conn))
    if record is not None and count:
        record.removing(count)


def count_messages(conn: apsw.Connection) -> int:
    row = conn.execute("SELECT count(*) FROM messages").fetchone()
    return int(row[0]) if row else 0
