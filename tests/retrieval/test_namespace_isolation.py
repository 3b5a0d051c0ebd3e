"""One namespace's keyword scores never depend on another namespace's documents."""

from __future__ import annotations

from pathlib import Path

import apsw

from bonsai.core.retrieval.documents import Doc
from bonsai.services.retrieval import HybridIndex, open_index
from bonsai.services.retrieval.db import SCHEMA_VERSION

PROJECT_B = [
    Doc(id="deploy", text="deploy with the release script after the tests pass"),
    Doc(id="style", text="release notes are written in the changelog"),
    Doc(id="db", text="the database lives in postgres on the staging host"),
]
# a big neighbour full of the query's words would change IDF and lengths in a shared table
PROJECT_A = [
    Doc(id=f"a{i}", text=f"release release release deploy note {i} " + "padding " * (i % 7))
    for i in range(60)
]


def _scores(index: HybridIndex, query: str) -> list[tuple[str, float]]:
    lexical, _ = index.lanes(query, 10)
    return list(lexical.hits)


def test_a_neighbours_documents_do_not_move_bm25_scores(tmp_path: Path) -> None:
    alone = open_index(tmp_path / "alone.db")
    b_alone = HybridIndex(alone, "memory:b")
    b_alone.sync(PROJECT_B, "fp")

    shared = open_index(tmp_path / "shared.db")
    HybridIndex(shared, "memory:a").sync(PROJECT_A, "fp")
    b_shared = HybridIndex(shared, "memory:b")
    b_shared.sync(PROJECT_B, "fp")

    for query in ("release deploy", "changelog notes", "postgres database"):
        assert _scores(b_shared, query) == _scores(b_alone, query), query
    assert _scores(b_shared, "release")[0][0] in {"deploy", "style"}


def test_an_old_shared_table_index_is_rebuilt_not_misread(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = apsw.Connection(str(path))
    conn.execute(
        "CREATE TABLE docs(rowid INTEGER PRIMARY KEY, namespace TEXT, doc_id TEXT, hash TEXT,"
        " meta TEXT); CREATE VIRTUAL TABLE docs_fts USING fts5(body);"
        " INSERT INTO docs VALUES (1, 'memory:b', 'ghost', 'h', '{}');"
        " INSERT INTO docs_fts(rowid, body) VALUES (1, 'release ghost');"
        " PRAGMA user_version=1;"
    )
    conn.close()
    index = HybridIndex(open_index(path), "memory:b")
    assert index.count() == 0  # derived rows dropped: the next sync rebuilds them
    index.sync(PROJECT_B, "fp")
    assert [doc for doc, _ in _scores(index, "release")] and "ghost" not in dict(
        _scores(index, "release ghost")
    )
    version = index.conn.execute("PRAGMA user_version").fetchone()
    assert version is not None and version[0] == SCHEMA_VERSION
