"""HybridIndex over a real SQLite file with a real (tiny) model2vec model."""

from __future__ import annotations

from pathlib import Path

import pytest

from bonsai.core.retrieval.documents import Doc
from bonsai.services.retrieval import HybridIndex, IndexSchemaError, open_index

DOCS = [
    Doc(id="build", text="ponyc needs make configure then make build", meta={"tier": "project"}),
    Doc(id="format", text="prefer ruff for formatting python code", meta={"tier": "user"}),
    Doc(id="db", text="apsw raises busy when the database is locked", meta={"tier": "user"}),
    Doc(id="time", text="store timestamps in utc", meta={"tier": "user"}),
]


class CountingEmbedder:
    """Wraps the real embedder and counts texts it had to encode."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.encoded = 0

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def encode(self, texts):
        self.encoded += len(texts)
        return self.inner.encode(texts)


def test_second_sync_with_same_fingerprint_does_no_work(index_conn, tiny_embedder) -> None:
    counting = CountingEmbedder(tiny_embedder)
    index = HybridIndex(index_conn, "ns", counting)
    first = index.sync(DOCS, "fp-1")
    assert (first.skipped, first.added, first.embedded) == (False, 4, 4)
    writes, encoded = index.rows_written, counting.encoded
    again = index.sync(DOCS, "fp-1")
    assert again.skipped
    assert (index.rows_written, counting.encoded) == (writes, encoded)


def test_sync_applies_changes_incrementally(hybrid: HybridIndex) -> None:
    hybrid.sync(DOCS, "fp-1")
    changed = [DOCS[0], Doc(id="format", text="prefer black", meta={}), DOCS[3]]
    report = hybrid.sync(changed, "fp-2")
    assert (report.added, report.updated, report.removed, report.embedded) == (0, 1, 1, 1)
    assert hybrid.count() == 3
    assert [h.id for h in hybrid.search("database locked", 5)] == []


def test_upsert_and_delete_leave_other_documents_alone(hybrid: HybridIndex) -> None:
    hybrid.upsert(DOCS[:2])
    hybrid.upsert([DOCS[2]])
    assert hybrid.count() == 3
    hybrid.delete(["build", "missing"])
    assert hybrid.count() == 2
    assert [h.id for h in hybrid.search("ponyc make", 5)] == []


def test_namespaces_are_isolated(index_conn, tiny_embedder) -> None:
    a = HybridIndex(index_conn, "session:a", tiny_embedder)
    b = HybridIndex(index_conn, "session:b", tiny_embedder)
    a.sync(DOCS[:2], "x")
    b.sync(DOCS[2:], "x")
    assert {h.id for h in a.search("ruff formatting database locked", 5)} == {"format"}
    assert {h.id for h in b.search("ruff formatting database locked", 5)} == {"db"}


def test_hybrid_order_when_lanes_disagree(hybrid: HybridIndex) -> None:
    docs = [
        # shares the word "tests" with the query, about something else
        Doc(id="keyword-only", text="run the tests with pytest before a release"),
        # no shared word, but the same topic as the query (compiler/build)
        Doc(id="paraphrase", text="ponyc toolchain: make configure then make build"),
        Doc(id="unrelated", text="recipe uses flour and grams in the oven"),
    ]
    hybrid.sync(docs, "fp")
    lexical, semantic = hybrid.lanes("compile binary tests", 10)
    assert [d for d, _ in lexical.hits] == ["keyword-only"]
    assert semantic is not None and semantic.hits[0][0] == "paraphrase"
    hits = hybrid.search("compile binary tests", 5)
    assert [h.id for h in hits] == ["keyword-only", "paraphrase"]
    assert hits[0].lanes.embedding is None and hits[0].lanes.bm25 is not None
    assert hits[1].lanes.bm25 is None and hits[1].lanes.embedding is not None


def test_embedding_breaks_a_keyword_tie(hybrid: HybridIndex) -> None:
    docs = [
        Doc(id="a-recipe-notes", text="notes for the oven"),
        Doc(id="b-build-notes", text="notes for the ponyc"),
    ]
    hybrid.sync(docs, "fp")
    hits = hybrid.search("notes about the compiler toolchain", 5)
    assert [h.id for h in hits] == ["b-build-notes", "a-recipe-notes"]
    assert hits[0].lanes.bm25 == hits[1].lanes.bm25
    assert hits[0].lanes.embedding is not None and hits[1].lanes.embedding is None


def test_without_an_embedder_the_index_is_bm25_only(index_conn) -> None:
    index = HybridIndex(index_conn, "plain")
    index.sync(DOCS, "fp")
    assert index.lanes("locked database", 5)[1] is None
    hits = index.search("locked database", 5)
    assert [h.id for h in hits] == ["db"]
    assert hits[0].lanes.embedding is None and hits[0].meta == {"tier": "user"}


def test_switching_model_reembeds_everything(index_conn, tiny_embedder) -> None:
    HybridIndex(index_conn, "ns").sync(DOCS, "fp")
    counting = CountingEmbedder(tiny_embedder)
    report = HybridIndex(index_conn, "ns", counting).sync(DOCS, "fp")
    assert not report.skipped and report.embedded == 4 and report.added == 0


def test_index_survives_reopen(tmp_path: Path, tiny_embedder) -> None:
    path = tmp_path / "idx.db"
    conn = open_index(path)
    HybridIndex(conn, "ns", tiny_embedder).sync(DOCS, "fp")
    conn.close()
    conn = open_index(path)
    index = HybridIndex(conn, "ns", tiny_embedder)
    assert index.sync(DOCS, "fp").skipped
    assert index.search("utc timestamps", 1)[0].id == "time"
    conn.close()


def test_duplicate_ids_are_rejected(hybrid: HybridIndex) -> None:
    with pytest.raises(ValueError, match="duplicate document id 'a'"):
        hybrid.sync([Doc(id="a", text="x"), Doc(id="a", text="y")], "fp")


def test_newer_schema_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    path = tmp_path / "idx.db"
    conn = open_index(path)
    conn.execute("PRAGMA user_version=99")
    conn.close()
    with pytest.raises(IndexSchemaError, match="delete the index file"):
        open_index(path)


def test_search_results_are_deterministic(hybrid: HybridIndex) -> None:
    hybrid.sync(DOCS, "fp")
    first = hybrid.search("python ruff database utc ponyc", 10)
    second = hybrid.search("python ruff database utc ponyc", 10)
    assert first == second
