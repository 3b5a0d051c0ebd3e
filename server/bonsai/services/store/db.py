"""Opening the one SQLite database: WAL, foreign keys, migrations, one owner.

**Invariant:** exactly one daemon writes a database. The owner holds an
exclusive ``flock`` on ``<db>.lock`` for its whole life; a second daemon
fails fast with :class:`DatabaseBusy` naming the holder's pid.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import apsw

from bonsai.services.env_errors import describe_sqlite_error
from bonsai.services.store.migrations import MIGRATIONS, SCHEMA_VERSION


class StoreError(Exception):
    """A database problem with a message a user can act on."""


class DatabaseBusy(StoreError):
    pass


class DatabaseCorrupt(StoreError):
    pass


@dataclass
class DatabaseLock:
    path: Path
    handle: IO[str]

    def release(self) -> None:
        with contextlib.suppress(OSError):
            fcntl.flock(self.handle, fcntl.LOCK_UN)
        self.handle.close()


def acquire_lock(db_path: Path) -> DatabaseLock:
    lock_path = db_path.with_name(db_path.name + ".lock")
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(lock_path, "a+", encoding="utf-8")  # noqa: SIM115 - held for the daemon's life
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "unknown"
        handle.close()
        raise DatabaseBusy(
            f"another bonsai daemon (pid {holder}) already owns {db_path}; "
            "connect to it with `bonsai connect`, or stop it with `bonsai stop`"
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    return DatabaseLock(lock_path, handle)


def _corrupt(db_path: Path, why: str) -> DatabaseCorrupt:
    return DatabaseCorrupt(
        f"{db_path} is not a usable bonsai database ({why}). Nothing was changed. "
        "Run `bonsai doctor` to see what is wrong and `bonsai doctor --restore` to restore "
        f"a backup; or stop bonsai and move the file aside (mv {db_path} {db_path}.broken); "
        "`sqlite3 FILE .recover` may salvage its content."
    )


def open_database(db_path: Path, quick_check: bool = True) -> apsw.Connection:
    """Open (creating if needed) and migrate the database. Raises StoreError."""
    db_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = apsw.Connection(str(db_path))
        conn.set_busy_timeout(5_000)
        if conn.readonly("main"):
            raise apsw.ReadOnlyError("opened read-only: the file or its directory is not writable")
        # read-only checks first: nothing is written to a file that is not ours
        check = conn.execute("PRAGMA quick_check").fetchall() if quick_check else []
        if check and check[0][0] != "ok":
            raise _corrupt(db_path, f"integrity check: {check[0][0]}")
        _ensure_ours(conn, db_path)
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchall()
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA synchronous=NORMAL")
    except apsw.Error as error:
        told = describe_sqlite_error(error, db_path)
        if told is not None:
            raise StoreError(told) from error
        raise _corrupt(db_path, str(error)) from error
    if mode and str(mode[0][0]).lower() != "wal":
        raise _corrupt(db_path, f"journal mode {mode[0][0]!r}")
    migrate(conn)
    return conn


def _ensure_ours(conn: apsw.Connection, db_path: Path) -> None:
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if tables and "schema_version" not in tables:
        raise _corrupt(db_path, f"it holds foreign tables: {', '.join(sorted(tables)[:5])}")


def current_version(conn: apsw.Connection) -> int:
    conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def migrate(conn: apsw.Connection) -> list[int]:
    """Apply forward migrations, each in its own transaction. Returns versions applied."""
    applied = []
    version = current_version(conn)
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"the database is at schema {version}, newer than this bonsai ({SCHEMA_VERSION}); "
            "upgrade bonsai"
        )
    for target, script in MIGRATIONS:
        if target <= version:
            continue
        with conn:
            conn.execute(script)
            conn.execute("INSERT INTO schema_version(version) VALUES (?)", (target,))
        applied.append(target)
    return applied


@contextlib.contextmanager
def transaction(conn: apsw.Connection) -> Iterator[apsw.Connection]:
    with conn:
        yield conn
