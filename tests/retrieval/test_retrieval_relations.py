"""Relation families in the second hop, on small constructed cases where the
linked entries tie on the question's words and only the relation the question
names tells the right one: the table as the index tokenizes it, and the whole
search over a real index with the families on and off."""

from __future__ import annotations

from bonsai.core.retrieval.documents import Doc
from bonsai.core.retrieval.fusion import FusionParams
from bonsai.core.retrieval.relations import RelationTable, expand, relation_key
from bonsai.services.retrieval import HybridIndex, open_index

NO_RELATIONS = FusionParams(hop_relations=False)


def _index(docs: list[Doc]) -> HybridIndex:
    index = HybridIndex(open_index(":memory:"), "test")
    index.sync(docs, "v1")
    return index


def _table() -> RelationTable:
    return RelationTable.build(_index([])._tokenize)


def _tokens(text: str) -> list[str]:
    return _index([])._tokenize(text)


def test_a_phrase_names_its_relation_only_as_adjacent_words_in_any_inflection() -> None:
    table = _table()
    assert "employment" in table.evoked(_tokens("She worked at Corvid Systems until May"))
    assert "residence" in table.evoked(_tokens("Mei moved to Halifax"))
    # the same words apart state no move of a person
    assert "residence" not in table.evoked(_tokens("Mei moved the team offsite to a later week"))
    # a word too common to name a relation alone ("work") names none
    assert table.evoked(_tokens("Outside work, Mei plays cello")) == {}


def test_the_expansion_weighs_a_family_as_the_question_word_that_named_it() -> None:
    table = _table()
    weights = {"emploi": 3.0, "halifax": 5.0}
    expansion = expand(table, _tokens("Who employs the colleague in Halifax?"), weights)
    key = relation_key("employment")
    assert expansion.weights[key] == 3.0
    assert "works at" in expansion.phrases[key]
    hire = _tokens("hired")[0]
    assert expansion.words[hire] == 3.0
    assert "emploi" not in expansion.words  # the question's own word keeps its weight
    assert expand(table, _tokens("Which city hosts the replicas?"), weights).phrases == {}


def _padding(n: int) -> list[Doc]:
    return [
        Doc(id=f"pad{i}", text=f"The build cache keeps artefacts for batch {i}.") for i in range(n)
    ]


def test_a_reverse_bridge_reaches_the_entry_stating_the_relation_asked_about() -> None:
    # the move note names the person by first name; three entries share the
    # name and none shares a word with "Who employs …": without the families
    # the shortest of them comes in, with them the one that says where she works
    docs = [
        Doc(id="move", text="Mei moved to Halifax in October 2025 and now works remotely."),
        Doc(id="job", text="Mei Quintero works as a senior technical writer at Corvid Systems."),
        Doc(id="hobby", text="Outside work, Mei Quintero plays cello."),
        Doc(id="note", text="Paths are normalised. Noted by Mei Quintero."),
        *_padding(20),
    ]
    index = _index(docs)
    question = "Who employs the colleague that relocated to Halifax?"
    plain = [h.id for h in index.search(question, 3, params=NO_RELATIONS)]
    hits = index.search(question, 3)
    assert plain[0] == "move" and "job" not in plain
    assert [h.id for h in hits[:2]] == ["move", "job"]
    assert hits[1].via == "move"


def test_a_rule_bridge_reaches_the_rule_through_a_word_of_its_family() -> None:
    # the decision names the rule; the rule entry and a status note both carry
    # its name, and neither shares a word with the question ("requirement" is
    # not "constraint" or "must")
    docs = [
        Doc(
            id="decision",
            text="Decision: the export job keeps its data in MinIO, for the Bellhaven review.",
        ),
        Doc(id="rule", text="Bellhaven: reads must answer within two milliseconds at the edge."),
        Doc(id="status", text="Bellhaven is green again."),
        *[
            Doc(id=f"minio{i}", text=f"MinIO bucket {i} was resized for the export.")
            for i in range(3)
        ],
        *_padding(20),
    ]
    index = _index(docs)
    question = "Which requirement shaped the export job's storage decision?"
    plain = [h.id for h in index.search(question, 5, params=NO_RELATIONS)]
    hits = [h.id for h in index.search(question, 5)]
    assert plain[0] == "decision" and "rule" not in plain
    assert hits[:2] == ["decision", "rule"]
