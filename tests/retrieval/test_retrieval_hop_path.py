"""The second hop reports the path that found each entry it lifted (and a
lifted entry takes its source's date bonus), and a large namespace leaves
out query words found in most of its documents without changing the
ranking (constructed cases, real index)."""

from __future__ import annotations

from bonsai.core.retrieval.documents import Doc, Hit, LaneScores
from bonsai.core.retrieval.fusion import Scores
from bonsai.core.retrieval.hop import inherit_bonus, second_hop
from bonsai.services.retrieval import HybridIndex, open_index


def test_the_hop_names_the_source_of_each_entry_it_lifted() -> None:
    terms = {
        "job": {"ana", "costa", "technic", "writer", "lumen"},
        "move": {"ana", "move", "porto"},
        "known": {"ana", "move", "lumen"},
    }
    scores: Scores = {"job": [1.0, 3.0, None], "known": [2.0, 4.0, None]}
    sources: dict[str, str] = {}
    lifted = second_hop(
        scores,
        ["job"],
        {"job": {"ana"}},
        ["move", "known"],
        {"move": 1.5, "technic": 1.0, "writer": 1.0},
        terms_of=lambda d: terms[d],
        average_terms=4.0,
        factor=0.8,
        limit=2,
        sources=sources,
    )
    assert set(lifted) == {"move", "known"}
    # "known" already ranked above what the hop would give it: not a hop hit
    assert sources == {"move": "job"}


def test_search_hits_carry_the_path_of_the_second_hop() -> None:
    index = HybridIndex(open_index(":memory:"), "path")
    index.sync(
        [
            Doc(id="job", text="Ana Costa works as a technical writer at Lumen Grid."),
            Doc(id="home", text="Ana now lives in Porto."),
            Doc(id="other", text="Bo Lind works as a data analyst at Quarry Labs."),
        ],
        "v1",
    )
    hits = index.search("where did the technical writer from Lumen Grid go?", 5)
    assert [(h.id, h.via) for h in hits] == [("job", None), ("home", "job")]


def _notes(n: int) -> list[Doc]:
    docs = [Doc(id=f"n{i:04d}", text=f"developer note {i} about the build") for i in range(n)]
    docs += [
        Doc(id="pony-a", text="developer note: ponyc needs a vendored LLVM"),
        Doc(id="pony-b", text="ponyc build steps: make configure, then make build"),
    ]
    return docs


def test_a_word_in_most_documents_changes_no_ranking_in_a_large_store() -> None:
    index = HybridIndex(open_index(":memory:"), "big")
    index.sync(_notes(600), "v1")
    with_common = [h.id for h in index.search("ponyc developer note", 5)]
    assert with_common == [h.id for h in index.search("ponyc", 5)] == ["pony-a", "pony-b"]
    # a question of common words only still finds documents
    assert len(index.search("developer note", 5)) == 5


def test_a_name_opening_a_sentence_links_when_it_is_a_name_elsewhere() -> None:
    # "Ana" opens the sentence of the move note (no capital after it), and it
    # is a name in the job note ("Ana Costa"): the hop goes from move to job
    index = HybridIndex(open_index(":memory:"), "reverse")
    index.sync(
        [
            Doc(id="move", text="Ana moved to Porto in May 2026."),
            Doc(id="job", text="Ana Costa is a technical writer at Lumen Grid."),
            Doc(id="other", text="Bo Lind is a data analyst at Quarry Labs."),
        ],
        "v1",
    )
    hits = index.search("which employer has the person who moved to Porto?", 5)
    assert [(h.id, h.via) for h in hits] == [("move", None), ("job", "move")]


def test_a_capital_opening_sentences_links_nothing_when_it_is_no_name() -> None:
    index = HybridIndex(open_index(":memory:"), "decisions")
    index.sync(
        [
            Doc(id="a", text="Decision: the ingest service keeps its data in Kafka."),
            Doc(id="b", text="Decision: the audit log keeps its data in Redis."),
        ],
        "v1",
    )
    hits = index.search("which database holds the ingest service's events?", 5)
    assert [(h.id, h.via) for h in hits] == [("a", None)]  # "Decision" is no link to b


def test_a_hop_hit_takes_its_dated_source_s_bonus_and_no_more() -> None:
    dated = {"in": True}
    hits = [
        Hit(id="move", score=1.3, lanes=LaneScores(bm25=9.0), meta=dated),
        Hit(id="other-move", score=1.0, lanes=LaneScores(bm25=6.0), meta=dated),
        Hit(id="job", score=0.8, lanes=LaneScores(), via="move"),
        Hit(id="orphan", score=0.7, lanes=LaneScores(), via="gone"),
        Hit(id="dated-hop", score=0.75, lanes=LaneScores(), meta=dated, via="move"),
    ]
    out = inherit_bonus(hits, lambda h: 0.3 if h.meta.get("in") else 0.0, 0.8)
    scores = {h.id: h.score for h in out}
    assert [h.id for h in out][:3] == ["move", "job", "other-move"]
    assert scores["job"] == 0.8 + 0.8 * 0.3  # under its source, above the month's others
    assert scores["orphan"] == 0.7  # its source is not among the hits
    assert scores["dated-hop"] == 0.75  # dated in the window itself: nothing more
