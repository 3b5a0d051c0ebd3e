"""A question asking *when* favours the turn that says when ("two weeks ago",
"last Saturday", a date) over one that only shares its words; other questions
rank as before (constructed cases through the memory service)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from bonsai.core.retrieval.dates import asks_when, mentions_time
from bonsai.core.retrieval.priors import PriorParams, memory_prior
from bonsai.services.memory.service import MemoryService
from bonsai.settings import MemorySettings

TODAY = date(2026, 7, 1)


def test_which_questions_ask_when() -> None:
    assert asks_when("When did Maren get the dog?")
    assert asks_when("what day was the library talk")
    assert asks_when("Where did Joel move, and when did he leave?")
    assert asks_when("How long ago did they meet?")
    assert not asks_when("what should I write when I open the licence file?")
    assert not asks_when("Which database does the ingest service use?")


def test_which_texts_say_when() -> None:
    for text in (
        "I got a new job two weeks ago",
        "we went camping last Saturday",
        "yesterday the build broke",
        "I start on Monday!",
        "On 14 March 2026 the scheduler moved to Redis.",
        "we met in 2019",
    ):
        assert mentions_time(text), text
    for text in ("Honestly just tired, but hanging in there.", "I may go", "last one wins"):
        assert not mentions_time(text), text


def test_the_bonus_needs_a_when_question_a_timed_entry_and_no_window() -> None:
    params = PriorParams()
    timed, plain = {"timed": True}, {"timed": False}
    gap = memory_prior(timed, TODAY, params, when=True) - memory_prior(plain, TODAY, params)
    assert gap == params.when_match > 0
    assert memory_prior(timed, TODAY, params) == memory_prior(plain, TODAY, params)
    window = (date(2026, 3, 1), date(2026, 3, 31))
    assert memory_prior(timed, TODAY, params, window, when=True) == memory_prior(
        plain, TODAY, params, window, when=True
    )


def _turn(root: Path, name: str, body: str) -> None:
    root.mkdir(parents=True, exist_ok=True)
    text = f"---\ndescription: conversation turn\ncreated: 2026-06-20\n---\n{body}\n"
    (root / f"{name}.md").write_text(text, encoding="utf-8")


def test_the_turn_that_says_when_comes_first(tmp_path: Path) -> None:
    memory = tmp_path / "home" / "memory"
    _turn(memory, "t-event", "Maren: We adopted a rescue dog two weeks ago, he snores.")
    _turn(memory, "t-echo", "Joel: Maren, your dog is adorable!")
    _turn(memory, "t-other", "Joel: I went hiking yesterday.")
    service = MemoryService(
        tmp_path / "home",
        None,
        MemorySettings(),
        env={"BONSAI_MEMORY_EMBEDDINGS": "off"},
        today=lambda: TODAY,
    )
    try:
        # on words alone the short echo wins
        assert service.search("What is Maren's dog like?", 2).results[0].name == "t-echo"
        assert service.search("When did Maren get the dog?", 2).results[0].name == "t-event"
    finally:
        service.close()
