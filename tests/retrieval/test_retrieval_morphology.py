"""A question in the present finds a turn in the past of an irregular verb
("What did Maren buy?" -> "I bought a secondhand cello"), which FTS5's porter
stemmer alone does not join; regular words and the rest of the query are as
before (constructed cases through the memory service)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from bonsai.core.retrieval.morphology import variants
from bonsai.core.retrieval.query import fts_match_expression, query_terms
from bonsai.services.memory.service import MemoryService
from bonsai.settings import MemorySettings

TODAY = date(2026, 7, 1)


def test_irregular_forms_are_searched_too() -> None:
    assert query_terms("What did Maren buy?") == ["maren", "buy", "bought"]
    assert query_terms("when did they go camping") == ["go", "camping", "went", "gone"]
    assert query_terms("the children I taught") == ["children", "taught", "child", "teach"]
    assert fts_match_expression("Which race did Joel run?") == '"race" OR "joel" OR "run" OR "ran"'


def test_regular_and_ambiguous_words_add_nothing() -> None:
    assert query_terms("Which database does the ingest service use?") == [
        "database",
        "ingest",
        "service",
        "use",
    ]
    # forms that are everyday words of another sense are left out
    assert variants("bite") == () and variants("born") == () and variants("lead") == ()
    # a form that is a stop word is not searched ("got" of "get")
    assert "got" not in query_terms("where did she get the bike")


def test_the_cap_on_terms_holds() -> None:
    text = " ".join(f"word{i}" for i in range(40)) + " buy"
    assert len(query_terms(text)) == 32


def _turn(root: Path, name: str, body: str) -> None:
    root.mkdir(parents=True, exist_ok=True)
    text = f"---\ndescription: conversation turn\ncreated: 2026-06-20\n---\n{body}\n"
    (root / f"{name}.md").write_text(text, encoding="utf-8")


def test_a_present_question_finds_the_past_turn(tmp_path: Path) -> None:
    memory = tmp_path / "home" / "memory"
    _turn(
        memory,
        "t-cello",
        "Maren: I bought a secondhand cello last weekend and I am slowly learning the chords "
        "from videos every evening after work.",
    )
    _turn(memory, "t-hello", "Maren: Hey Joel, how are you?")
    _turn(memory, "t-rain", "Maren: It rained all week here.")
    _turn(memory, "t-joel", "Joel: Good to hear from you, Maren!")
    service = MemoryService(
        tmp_path / "home",
        None,
        MemorySettings(),
        env={"BONSAI_MEMORY_EMBEDDINGS": "off"},
        today=lambda: TODAY,
    )
    try:
        found = service.search("What did Maren buy?", 3).results
        assert found[0].name == "t-cello"
        # without the verb the longer turn ranks below the short ones naming Maren
        plain = [h.name for h in service.search("Maren", 4).results]
        assert plain.index("t-cello") > 0
    finally:
        service.close()
