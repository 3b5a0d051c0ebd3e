"""A version per session that moves on every write touching it, read in memory.

Temporary triggers on the daemon's connection (nothing is stored in the
database file) call one SQL function, registered on that connection, that
bumps a counter held in this process: each insert, update or delete in a table
with a ``session_id`` column bumps that session's version; one in any other
table (rules, the schema) bumps the global version; the ``sessions`` row counts
for its own session. A view computed at (session version, global version) is
still true while both stand. Reading them is a dictionary lookup (no SQLite
statement: a poll of a session that did not move costs the loop microseconds).

The counters only ever grow, in memory: a write rolled back has still moved them,
so a view computed meanwhile is recomputed rather than kept (never the reverse).

Besides, an update or delete of a ``messages`` row moves that session's **edits**
count (:func:`edits`): while it stands the session's log has only grown, so a
view may read the rows appended since its last read and keep the others
(``bonsai.session.view_store``).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass, field

import apsw

GLOBAL = ""
_FUNCTION = "bonsai_version_bump"
# a streaming reply is in no view until its step commits (then ``messages`` moves)
UNSEEN = frozenset({"partials"})
EDITS = "edits:"  # the key prefix of a session's edits count among the counters
_NULL = "\0null"  # a NULL session id (every session_id column is NOT NULL)


@dataclass
class Counters:
    """The write counters of one connection, by session id (``GLOBAL``: the rest)."""

    values: dict[str, int] = field(default_factory=dict)
    # told the name of each counter moved, inside the write (the view worker's eager
    # views, ``bonsai.session.views``): it must only note the name, never touch the database
    listener: Callable[[str], None] | None = None

    def bump(self, *keys: apsw.SQLiteValue) -> None:
        name = str(keys[0]) if keys and keys[0] is not None else _NULL  # no NULL is read
        self.values[name] = self.values.get(name, 0) + 1
        if self.listener is not None:
            self.listener(name)


_COUNTERS: weakref.WeakKeyDictionary[apsw.Connection, Counters] = weakref.WeakKeyDictionary()


def counters(conn: apsw.Connection) -> Counters:
    """The counters :func:`install` keeps for ``conn``."""
    found = _COUNTERS.get(conn)
    if found is None:
        raise RuntimeError("versions.install was not called on this connection")
    return found


def install(conn: apsw.Connection) -> None:
    """Register the counting function and create one trigger per table and write kind
    (idempotent; the counters start at 0 for this process)."""
    kept = _COUNTERS.setdefault(conn, Counters())
    conn.create_scalar_function(_FUNCTION, kept.bump, 1)
    query = "SELECT name, sql FROM main.sqlite_master WHERE type = 'table'"
    rows = [(str(name), str(sql or "")) for name, sql in conn.execute(query)]
    virtual = [name for name, sql in rows if sql.upper().startswith("CREATE VIRTUAL")]
    for table, _ in rows:
        if table.startswith("sqlite_") or table in virtual or table in UNSEEN:
            continue
        if any(table.startswith(f"{v}_") for v in virtual):  # FTS shadow tables: never
            continue
        columns = {row[1] for row in conn.execute(f'PRAGMA main.table_info("{table}")')}
        for kind, row in (("INSERT", "NEW"), ("UPDATE", "NEW"), ("DELETE", "OLD")):
            if "session_id" in columns:
                key = f"{row}.session_id"
            elif table == "sessions":  # the session row itself (title, updated_at)
                key = f"{row}.id"
            else:
                key = "''"
            conn.execute(
                f'CREATE TEMP TRIGGER IF NOT EXISTS "bonsai_v_{table}_{kind.lower()}" '
                f'AFTER {kind} ON main."{table}" BEGIN SELECT {_FUNCTION}({key}); END'
            )
    for kind in ("UPDATE", "DELETE"):  # the log changed, not only grew
        conn.execute(
            f'CREATE TEMP TRIGGER IF NOT EXISTS "bonsai_e_messages_{kind.lower()}" '
            f'AFTER {kind} ON main."messages" BEGIN '
            f"SELECT {_FUNCTION}('{EDITS}' || OLD.session_id); END"
        )


def version(conn: apsw.Connection, session_id: str) -> tuple[int, int]:
    """(this session's version, the global version); (0, 0) before any write."""
    values = counters(conn).values
    return values.get(session_id, 0), values.get(GLOBAL, 0)


def edits(conn: apsw.Connection, session_id: str) -> int:
    """How many times a message row of this session was changed or deleted (0: never)."""
    return counters(conn).values.get(EDITS + session_id, 0)
