"""The multi-hop and temporal steps of retrieval, on small constructed cases
where the right answer is known: clause lanes, entity feedback, date windows
and the date-match prior (pure core), and the whole search over an index."""

from __future__ import annotations

from datetime import date

from bonsai.core.retrieval.dates import body_dates, date_prior, query_window
from bonsai.core.retrieval.documents import Doc, Lane
from bonsai.core.retrieval.fusion import FusionParams, add_lane_bonus, fuse
from bonsai.core.retrieval.parts import entities, feedback_terms, query_parts
from bonsai.core.retrieval.priors import PriorParams, memory_prior
from bonsai.services.retrieval import HybridIndex, open_index

TODAY = date(2026, 7, 1)
OFF = FusionParams(part_weight=0.0, feedback_weight=0.0)


def test_a_question_of_two_clauses_splits_and_a_simple_one_does_not() -> None:
    parts = query_parts("Why did the ingest service pick Kafka, and what does the Oriel rule need?")
    assert parts == ["Why did the ingest service pick Kafka", "what does the Oriel rule need"]
    assert query_parts("How do we deploy the docs site?") == []
    # a clause with a single content word is not worth a lane of its own
    assert query_parts("Where does Ana Costa work, and why?") == []


def test_entities_are_names_and_identifiers_not_sentence_capitals_or_months() -> None:
    text = "Decision: Ana Costa moved ingest-v2 to Postgres in March. Agreed by Li."
    assert entities(text) == ["Ana", "Costa", "ingest-v2", "Postgres", "Li"]


def test_feedback_terms_leave_out_what_the_question_already_says() -> None:
    terms = feedback_terms("Which city did Ana move to?", ["Ana Costa works at Lumen Grid."])
    assert terms == ["Costa", "Lumen", "Grid"]


def test_a_lane_bonus_lifts_the_best_match_of_each_clause() -> None:
    lexical = Lane(hits=(("a1", 10.0), ("a2", 9.8), ("a3", 9.6), ("b", 6.0)))
    part_b = Lane(hits=(("b", 5.0), ("a1", 0.5)))
    plain = [h.id for h in fuse(lexical, None, OFF)]
    lifted = [h.id for h in add_lane_bonus(fuse(lexical, None, OFF), [part_b], 0.5, 10)]
    assert plain.index("b") == 3
    assert lifted.index("b") < 2 and lifted[0] == "a1"


def test_a_lane_bonus_brings_in_a_document_the_main_lane_missed() -> None:
    lexical = Lane(hits=(("a", 10.0),))
    feedback = Lane(hits=(("bridge", 4.0),))
    hits = add_lane_bonus(fuse(lexical, None, OFF), [feedback], 0.5, 10)
    assert [h.id for h in hits] == ["a", "bridge"]
    assert hits[1].lanes.bm25 == 4.0


def test_question_windows() -> None:
    assert query_window("what changed last month?", TODAY) == (date(2026, 6, 1), date(2026, 6, 30))
    assert query_window("what happened in March 2026", TODAY) == (
        date(2026, 3, 1),
        date(2026, 3, 31),
    )
    before = query_window("what did we pick before 2026-04-01?", TODAY)
    assert before is not None and before[1] == date(2026, 3, 31)
    after = query_window("who joined after May 2025", TODAY)
    assert after is not None and after[0] == date(2025, 6, 1)
    assert query_window("anything from 2025?", TODAY) == (date(2025, 1, 1), date(2025, 12, 31))
    assert query_window("how do we build the compiler", TODAY) is None


def test_body_dates_in_several_spellings() -> None:
    text = "Shipped 2026-03-14; planned in March 2026, reviewed on 3 April 2026 and May 5, 2026."
    assert body_dates(text) == ["2026-03-14", "2026-03-01", "2026-04-03", "2026-05-05"]
    assert body_dates("version 2026-13-45 is not a date") == []


def test_the_date_prior_favours_an_entry_dated_inside_the_window() -> None:
    window = (date(2026, 6, 1), date(2026, 6, 30))
    june = {"created": "2026-06-11", "updated": "2026-06-11"}
    march = {"created": "2026-03-02", "updated": "2026-06-20", "dates": []}
    body_only = {"created": "2025-01-01", "dates": ["2026-06-03"]}
    assert date_prior(june, window, 0.3) == 0.3
    assert date_prior(march, window, 0.3) == 0.3  # updated in June counts
    assert date_prior(body_only, window, 0.3) == 0.3
    assert date_prior({"created": "2025-01-01"}, window, 0.3) == 0.0
    assert date_prior(june, None, 0.3) == 0.0
    params = PriorParams()
    assert memory_prior(june, TODAY, params, window) > memory_prior(june, TODAY, params) + 0.2


def _index(docs: list[Doc]) -> HybridIndex:
    index = HybridIndex(open_index(":memory:"), "test")
    index.sync(docs, "v1")
    return index


def _filler(n: int) -> list[Doc]:
    return [
        Doc(id=f"f{i}", text=f"A technical writer asked about the city office {i}.")
        for i in range(n)
    ]


def test_search_surfaces_the_bridge_entry_through_a_shared_name() -> None:
    docs = [
        Doc(id="job", text="Ana Costa works as a technical writer at Lumen Grid since 2023."),
        Doc(id="move", text="Ana now lives in Porto."),
        *_filler(6),
    ]
    index = _index(docs)
    question = "Which city did the technical writer at Lumen Grid move to?"
    before = [h.id for h in index.search(question, 8, params=OFF)]
    after = [h.id for h in index.search(question, 8)]
    assert "job" in before and "move" not in before  # it shares no word with the question
    assert "job" in after and "move" in after  # reached through the name "Ana Costa"


def test_search_surfaces_both_halves_of_a_two_clause_question() -> None:
    docs = [
        Doc(id="decision", text="The billing worker keeps its data in DuckDB."),
        Doc(id="rule", text="The Oriel rule: storage must survive the loss of one region."),
        *[
            Doc(id=f"d{i}", text=f"The billing worker data in DuckDB was reviewed, item {i}.")
            for i in range(6)
        ],
    ]
    index = _index(docs)
    question = "Where does the billing worker keep its data in DuckDB, and what does the Oriel rule demand?"
    assert "rule" in [h.id for h in index.search(question, 2)]
    assert "decision" in [h.id for h in index.search(question, 3)]


def test_a_dated_question_ranks_the_entry_of_that_month_first() -> None:
    docs = [
        Doc(
            id=f"n{m}", text="The search backend moved to Redis.", meta={"created": f"2026-0{m}-10"}
        )
        for m in (2, 4, 6)
    ]
    index = _index(docs)
    window = query_window("What changed in the search backend last month?", TODAY)
    params = PriorParams()
    top = index.search(
        "What changed in the search backend last month?",
        3,
        prior=lambda meta: memory_prior(meta, TODAY, params, window),
    )
    assert top[0].id == "n6"
