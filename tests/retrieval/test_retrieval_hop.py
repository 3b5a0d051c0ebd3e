"""The second hop (entity links across entries) on small constructed cases
where the right answer is known: the pure step, and the whole search over a
real index (links and term sets stored at write time, an older index file
rebuilt)."""

from __future__ import annotations

from pathlib import Path

import apsw

from bonsai.core.retrieval.documents import Doc
from bonsai.core.retrieval.fusion import FusionParams, Scores
from bonsai.core.retrieval.hop import second_hop
from bonsai.services.retrieval import HybridIndex, open_index
from bonsai.services.retrieval.db import SCHEMA_VERSION

OFF = FusionParams(feedback_weight=0.0)
TERMS = {
    "job": {"ana", "costa", "technic", "writer", "lumen", "grid"},
    "move": {"ana", "move", "porto"},
    "hobby": {"ana", "costa", "cello"},
    "other": {"technic", "writer", "citi"},
}


def _hop(scores: Scores, candidates: list[str], **kw: object) -> list[str]:
    weights = {"citi": 2.0, "move": 1.5, "technic": 1.0, "writer": 1.0, "lumen": 2.0}
    args: dict = {"factor": 0.8, "limit": 2, "nomatch": False, "average_terms": 4.0} | kw
    return second_hop(
        scores,
        [h for h in ("job", "other") if h in scores],
        {"job": {"ana", "costa"}, "other": set()},
        candidates,
        weights,
        terms_of=lambda d: TERMS[d],
        **args,
    )


def test_a_linked_entry_that_completes_the_question_sits_just_below_its_source() -> None:
    scores: Scores = {"job": [0.9, 3.0, None], "other": [1.0, 3.2, None]}
    lifted = _hop(scores, ["move", "hobby"])
    assert lifted == ["move"]  # the hobby entry shares the name but no question word
    order = sorted(scores, key=lambda d: -(scores[d][0] or 0.0))
    assert order == ["other", "job", "move"]
    assert scores["move"][1] is None  # it came from no lane: its BM25 evidence stays empty


def test_without_a_link_nothing_is_lifted() -> None:
    scores: Scores = {"other": [1.0, 3.2, None]}
    assert _hop(scores, ["move", "hobby"]) == []
    assert set(scores) == {"other"}


def test_an_entry_matching_no_question_word_comes_in_only_when_allowed_and_lower() -> None:
    scores: Scores = {"job": [1.0, 3.0, None]}
    assert _hop(dict(scores), ["hobby"]) == []
    allowed: Scores = {"job": [1.0, 3.0, None]}
    assert _hop(allowed, ["hobby"], nomatch=True) == ["hobby"]
    assert allowed["hobby"][0] == 0.8 * 0.8


def test_the_lift_is_bounded() -> None:
    scores: Scores = {"job": [1.0, 3.0, None]}
    assert len(_hop(scores, ["move", "hobby"], nomatch=True, limit=1)) == 1


def _index(docs: list[Doc]) -> HybridIndex:
    index = HybridIndex(open_index(":memory:"), "test")
    index.sync(docs, "v1")
    return index


def _people(n: int) -> list[Doc]:
    return [
        Doc(id=f"p{i}", text=f"Person {i} works as a technical writer at Office {i}.")
        for i in range(n)
    ]


def test_search_follows_a_name_to_the_entry_that_answers_a_bridge_question() -> None:
    docs = [
        Doc(id="job", text="Priya Natarajan works as a database administrator at Halvorsen."),
        Doc(id="move", text="Priya moved to Lisbon in March 2026."),
        Doc(id="hobby", text="Outside work, Priya Natarajan keeps bees."),
        *[
            Doc(id=f"c{i}", text=f"The database team moved the city replicas, batch {i}.")
            for i in range(6)
        ],
    ]
    index = _index(docs)
    question = "Which city did the database administrator at Halvorsen move to?"
    plain = [h.id for h in index.search(question, 3, params=OFF)]
    hop = [h.id for h in index.search(question, 3)]
    assert "move" not in plain
    assert hop[:2] == ["job", "move"]
    # linked too, but it matches no word of the question: below the one that
    # does, and not at all when such entries are not allowed in
    strict = [h.id for h in index.search(question, 3, params=FusionParams(feedback_nomatch=False))]
    assert "hobby" not in strict and strict[:2] == ["job", "move"]


def test_a_word_in_most_entries_is_no_link() -> None:
    # "Office" is capitalised (an entity word) but in every entry: following it
    # would link everything to everything
    docs = [*_people(60), Doc(id="q", text="The Office moved to Porto.")]
    index = _index(docs)
    params = FusionParams(link_df=0.01, link_df_min=5)
    hits = [
        h.id for h in index.search("Which technical writer works at Office 3?", 5, params=params)
    ]
    assert "q" not in hits


def test_a_version_2_index_is_rebuilt_with_links(tmp_path: Path) -> None:
    path = tmp_path / "v2.db"
    conn = apsw.Connection(str(path))
    conn.execute(
        "CREATE TABLE docs(rowid INTEGER PRIMARY KEY, namespace TEXT NOT NULL, doc_id TEXT NOT"
        " NULL, hash TEXT NOT NULL, meta TEXT NOT NULL, UNIQUE(namespace, doc_id));"
        " CREATE VIRTUAL TABLE fts_old USING fts5(body);"
        " INSERT INTO docs VALUES (1, 'n', 'ghost', 'h', '{}');"
        " INSERT INTO fts_old(rowid, body) VALUES (1, 'ghost');"
        " PRAGMA user_version=2;"
    )
    conn.close()
    index = HybridIndex(open_index(path), "n")
    assert index.count() == 0
    index.sync(
        [
            Doc(id="job", text="Ana Costa works at Lumen Grid."),
            Doc(id="move", text="Ana moved to Porto."),
        ],
        "fp",
    )
    hits = [h.id for h in index.search("Where did the Lumen Grid person move?", 2)]
    assert set(hits) == {"job", "move"}
    tables = {str(r[0]) for r in index.conn.execute("SELECT name FROM sqlite_master")}
    assert "fts_old" not in tables
    version = index.conn.execute("PRAGMA user_version").fetchone()
    assert version is not None and version[0] == SCHEMA_VERSION
