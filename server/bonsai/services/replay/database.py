"""Reaching the session database from the CLI without fighting the daemon.

The daemon owns the database (an exclusive flock on ``bonsai.db.lock``) and is
its only writer. Reads open a read-only connection, which works next to a WAL
writer. Writes go through the running daemon; when none runs, the CLI takes
the lock itself for the duration of the write (a daemon starting meanwhile
waits for nothing: it fails fast, and the CLI is done in milliseconds).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw

from bonsai.services.store.db import acquire_lock, open_database


class DatabaseMissing(LookupError):
    pass


def db_path(home: Path) -> Path:
    return home / "bonsai.db"


def open_readonly(home: Path) -> apsw.Connection:
    """A read-only connection to ``$BONSAI_HOME/bonsai.db``."""
    path = db_path(home)
    if not path.exists():
        raise DatabaseMissing(
            f"no bonsai database at {path}: import or replay a session first (check BONSAI_HOME)"
        )
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    conn.set_busy_timeout(5_000)
    return conn


@contextmanager
def locked_writer(home: Path) -> Iterator[apsw.Connection]:
    """Own the database for one write (raises ``DatabaseBusy`` when a daemon holds it)."""
    path = db_path(home)
    lock = acquire_lock(path)
    try:
        conn = open_database(path)
        try:
            yield conn
        finally:
            conn.close()
    finally:
        lock.release()
