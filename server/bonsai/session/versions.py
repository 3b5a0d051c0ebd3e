"""A version per session that moves on every write touching it, read in microseconds.

Temporary triggers on the daemon's connection (nothing is stored in the
database file): each insert, update or delete in a table with a
``session_id`` column bumps that session's version; one in any other table
(rules, the schema) bumps the global version; the ``sessions`` row counts for
its own session. A view computed at
(session version, global version) is still true while both stand.

Besides, an update or delete of a ``messages`` row moves that session's **edits**
count (:func:`edits`): while it stands the session's log has only grown, so a
view may read the rows appended since its last read and keep the others
(``bonsai.session.view_store``).
"""

from __future__ import annotations

import apsw

GLOBAL = ""
_TABLE = "temp.bonsai_versions"
# a streaming reply is in no view until its step commits (then ``messages`` moves)
UNSEEN = frozenset({"partials"})
EDITS = "edits:"  # the key prefix of a session's edits count in the same table


def install(conn: apsw.Connection) -> None:
    """Create the counters and one trigger per table and write kind (idempotent)."""
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {_TABLE} (session_id TEXT PRIMARY KEY, v INTEGER NOT NULL)"
    )
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
                f'AFTER {kind} ON main."{table}" BEGIN '
                f"INSERT INTO bonsai_versions (session_id, v) VALUES ({key}, 1) "
                "ON CONFLICT (session_id) DO UPDATE SET v = v + 1; END"
            )
    for kind in ("UPDATE", "DELETE"):  # the log changed, not only grew
        conn.execute(
            f'CREATE TEMP TRIGGER IF NOT EXISTS "bonsai_e_messages_{kind.lower()}" '
            f'AFTER {kind} ON main."messages" BEGIN '
            f"INSERT INTO bonsai_versions (session_id, v) VALUES ('{EDITS}' || OLD.session_id, 1) "
            "ON CONFLICT (session_id) DO UPDATE SET v = v + 1; END"
        )


def version(conn: apsw.Connection, session_id: str) -> tuple[int, int]:
    """(this session's version, the global version); (0, 0) before any write."""
    found: dict[str, int] = {}
    query = f"SELECT session_id, v FROM {_TABLE} WHERE session_id IN (?, ?)"
    for key, value in conn.execute(query, (session_id, GLOBAL)):
        found[str(key)] = int(value)  # type: ignore[arg-type]
    return found.get(session_id, 0), found.get(GLOBAL, 0)


def edits(conn: apsw.Connection, session_id: str) -> int:
    """How many times a message row of this session was changed or deleted (0: never)."""
    query = f"SELECT v FROM {_TABLE} WHERE session_id = ?"
    row = conn.execute(query, (EDITS + session_id,)).fetchone()
    return 0 if row is None else int(row[0])  # type: ignore[call-overload]
