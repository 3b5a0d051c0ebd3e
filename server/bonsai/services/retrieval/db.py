"""The SQLite shadow behind :class:`~bonsai.services.retrieval.index.HybridIndex`.

One database file can hold many namespaces (memory of one workspace, history
of one session, …). Each namespace has a full-text table of its own
(:func:`fts_table`), so BM25's corpus statistics (document count, lengths, term
frequencies) are that namespace's alone: one project's files never move the
keyword scores of another. Everything in it is derived data: deleting the file
loses nothing but the time to rebuild it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import apsw

SCHEMA_VERSION = 4

_SCHEMA = """
CREATE TABLE IF NOT EXISTS docs(
    rowid INTEGER PRIMARY KEY,
    namespace TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    hash TEXT NOT NULL,
    meta TEXT NOT NULL,
    links TEXT NOT NULL DEFAULT '',
    terms TEXT NOT NULL DEFAULT '',
    UNIQUE(namespace, doc_id)
);
CREATE TABLE IF NOT EXISTS vectors(
    rowid INTEGER PRIMARY KEY,
    model TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vec BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS namespaces(
    namespace TEXT PRIMARY KEY,
    fingerprint TEXT,
    generation INTEGER NOT NULL DEFAULT 0
);
"""

BUSY_TIMEOUT_MS = 5_000


class IndexSchemaError(RuntimeError):
    """The database was written by a newer bonsai (unknown schema version)."""


def open_index(path: Path | str) -> apsw.Connection:
    """Open (creating if needed) an index database with the current schema.

    ``":memory:"`` gives a private in-memory index. Files use WAL so a reader
    never blocks the writer, and a busy timeout so two daemons can share one."""
    if str(path) != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = apsw.Connection(str(path))
    conn.setbusytimeout(BUSY_TIMEOUT_MS)
    if str(path) != ":memory:":
        conn.execute("PRAGMA journal_mode=WAL")
    ensure_schema(conn)
    return conn


def ensure_schema(conn: apsw.Connection) -> None:
    version = _user_version(conn)
    if version > SCHEMA_VERSION:
        raise IndexSchemaError(
            f"index schema version {version} is newer than this bonsai ({SCHEMA_VERSION}); "
            "delete the index file to rebuild it"
        )
    with conn:
        if 0 < version < SCHEMA_VERSION:
            _drop_all(conn)
        conn.execute(_SCHEMA)
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")


def _drop_all(conn: apsw.Connection) -> None:
    """An older schema (version 1 kept one full-text table for every namespace,
    version 2 no entity links or term sets): every row is derived, so all
    tables are dropped and each namespace rebuilds on its next sync."""
    rows = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'"
    ).fetchall()
    for (name,) in rows:
        conn.execute(f'DROP TABLE IF EXISTS "{name}"')
    for table in ("docs_fts", "docs", "vectors", "namespaces"):
        conn.execute(f"DROP TABLE IF EXISTS {table}")


def fts_table(namespace: str) -> str:
    """The name of ``namespace``'s own FTS5 table (a safe SQL identifier)."""
    return "fts_" + hashlib.sha256(namespace.encode()).hexdigest()[:20]


def ensure_fts(conn: apsw.Connection, namespace: str) -> str:
    """Create ``namespace``'s full-text table and its ``_vocab`` companion (the
    document frequency of each indexed term, for the second hop's weights)."""
    table = fts_table(namespace)
    conn.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING fts5(body, tokenize='porter unicode61')"
    )
    conn.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {table}_vocab USING fts5vocab({table}, 'row')"
    )
    return table


def _user_version(conn: apsw.Connection) -> int:
    row = conn.execute("PRAGMA user_version").fetchone()
    return int(row[0]) if row else 0


def as_float(value: object) -> float:
    """A numeric SQLite column value as float (clear error on anything else)."""
    if isinstance(value, int | float):
        return float(value)
    raise TypeError(f"expected a number from the index, got {type(value).__name__}")


def as_int(value: object) -> int:
    if isinstance(value, int):
        return value
    raise TypeError(f"expected an integer from the index, got {type(value).__name__}")


def as_bytes(value: object) -> bytes:
    if isinstance(value, bytes):
        return value
    raise TypeError(f"expected a blob from the index, got {type(value).__name__}")
