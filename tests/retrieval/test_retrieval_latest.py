"""A question asking for the latest of several entries ("what was the latest
change to …") favours the newest one; a question naming a span or none at all
ranks as before (constructed cases through the memory service)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from bonsai.core.retrieval.dates import asks_latest
from bonsai.core.retrieval.priors import PriorParams, memory_prior
from bonsai.services.memory.service import MemoryService
from bonsai.settings import MemorySettings

TODAY = date(2026, 7, 1)


def test_which_questions_ask_for_the_latest() -> None:
    assert asks_latest("What was the latest change to the billing worker?")
    assert asks_latest("what's the most recent update on the scheduler")
    assert not asks_latest("What changed in the billing worker last month?")
    assert not asks_latest("Which database does the billing worker use?")


def test_the_newest_entry_gets_the_larger_bonus() -> None:
    params = PriorParams()
    new = {"updated": "2026-06-20"}
    old = {"updated": "2025-02-01"}
    gap = memory_prior(new, TODAY, params, latest=True) - memory_prior(
        old, TODAY, params, latest=True
    )
    plain = memory_prior(new, TODAY, params) - memory_prior(old, TODAY, params)
    assert gap > 0.2 > plain


def _entry(root: Path, name: str, day: str, body: str) -> None:
    root.mkdir(parents=True, exist_ok=True)
    text = f"---\ndescription: billing worker change\ncreated: {day}\nupdated: {day}\n---\n{body}\n"
    (root / f"{name}.md").write_text(text, encoding="utf-8")


def test_the_latest_change_comes_first(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _entry(home / "memory", "bw-old", "2025-02-01", "Billing worker change: Kafka.")
    _entry(home / "memory", "bw-mid", "2025-10-14", "Billing worker change: it moved to Redis.")
    _entry(
        home / "memory",
        "bw-new",
        "2026-06-20",
        "The billing worker change of this summer put its queue on NATS for the payments team.",
    )
    service = MemoryService(
        home, None, MemorySettings(), env={"BONSAI_MEMORY_EMBEDDINGS": "off"}, today=lambda: TODAY
    )
    try:
        plain = [h.name for h in service.search("billing worker change", 3).results]
        assert plain[0] != "bw-new"  # on words alone a shorter entry wins
        latest = service.search("What was the latest billing worker change?", 3).results
        assert latest[0].name == "bw-new"
    finally:
        service.close()
