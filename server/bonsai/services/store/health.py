"""Is the database what was committed? A read-only inspection, and the start-up verdict.

:func:`inspect` opens ``bonsai.db`` read-only (a read-only connection never
checkpoints, so a damaged WAL stays as it was found), runs ``PRAGMA
quick_check`` and counts the messages; :func:`verify_committed` compares them
with ``bonsai.commit`` and raises :class:`DatabaseDamaged` with what is missing
and what to do, so the daemon never starts empty over a database that held data.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

import apsw

from bonsai.services.store.commit_record import (
    Committed,
    RecordUnreadable,
    read_record,
    record_path,
)
from bonsai.services.store.db import StoreError


class DatabaseDamaged(StoreError):
    """The database holds less than was acknowledged, or fails its integrity check."""


@dataclass(frozen=True)
class DbHealth:
    db_path: Path
    db_size: int | None  # None: missing
    wal_size: int | None
    check: str  # "ok", or what quick_check (or opening) reported
    messages: int | None  # None: unreadable
    record: Committed | None
    record_problem: str | None

    @property
    def lost(self) -> int:
        """Acknowledged messages the database no longer holds."""
        if self.record is None:
            return 0
        return max(0, self.record.messages - (self.messages or 0))

    @property
    def healthy(self) -> bool:
        return self.check == "ok" and self.lost == 0

    def files(self) -> str:
        def size(value: int | None) -> str:
            return "missing" if value is None else f"{value} bytes"

        return (
            f"{self.db_path.name} {size(self.db_size)}, "
            f"{self.db_path.name}-wal {size(self.wal_size)}"
        )


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return None


def inspect(db_path: Path, quick_check: bool = True) -> DbHealth:
    """What the database holds, measured without changing a byte of it."""
    try:
        record, problem = read_record(db_path), None
    except RecordUnreadable as error:
        record, problem = None, str(error)
    except OSError as error:
        record, problem = None, f"{record_path(db_path)}: {error.strerror}"
    db_size = _size(db_path)
    wal_size = _size(Path(f"{db_path}-wal"))
    if db_size is None:
        return DbHealth(db_path, None, wal_size, "ok", 0, record, problem)
    check, messages = "ok", None
    conn = None
    try:
        conn = apsw.Connection(str(db_path), flags=apsw.SQLITE_OPEN_READONLY)
        conn.set_busy_timeout(5_000)
        if quick_check:
            rows = conn.execute("PRAGMA quick_check").fetchall()
            if rows and rows[0][0] != "ok":
                check = "; ".join(str(r[0]) for r in rows[:3])
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        messages = 0
        if "messages" in tables:
            row = conn.execute("SELECT count(*) FROM messages").fetchone()
            messages = int(row[0]) if row else 0
    except apsw.Error as error:
        check = f"{type(error).__name__}: {error}"
    finally:
        if conn is not None:
            with contextlib.suppress(apsw.Error):
                conn.close()
    return DbHealth(db_path, db_size, wal_size, check, messages, record, problem)


def verify_committed(db_path: Path, backups_hint: str = "") -> DbHealth:
    """Raise :class:`DatabaseDamaged` unless the database holds what was acknowledged."""
    health = inspect(db_path)
    what_to_do = (
        "Nothing was changed. Run `bonsai doctor` to see what is left, then "
        f"`bonsai doctor --restore` to restore a backup{backups_hint}, or "
        "`bonsai doctor --accept-loss` to carry on with what the database still holds "
        "(the damaged files are kept aside)."
    )
    if health.check != "ok":
        raise DatabaseDamaged(
            f"{db_path} is not a usable bonsai database (its integrity check failed: "
            f"{health.check}). {what_to_do}"
        )
    if health.lost:
        assert health.record is not None
        held = "is missing" if health.db_size is None else f"holds {health.messages} messages"
        if health.db_size == 0:
            held = "is empty (0 bytes)"
        wal = "missing" if health.wal_size is None else f"{health.wal_size} bytes"
        raise DatabaseDamaged(
            f"{db_path} {held} but {health.record.messages} were acknowledged "
            f"(recorded in {record_path(db_path).name}); {health.lost} are gone: the database "
            f"or its write-ahead log ({db_path.name}-wal: {wal}) was truncated, altered or "
            f"deleted. {what_to_do}"
        )
    return health


def private_mode_problems(paths: list[Path]) -> list[str]:
    """Files another user could read (for ``bonsai doctor``)."""
    out = []
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            mode = os.lstat(path).st_mode & 0o777
            if mode & 0o077:
                out.append(f"{path} has mode {mode:o} (other users can reach it)")
    return out
