"""Through the memory service: a question naming a time picks the entry of
that time, by front matter or by a date written in the body."""

from __future__ import annotations

from pathlib import Path

ENTRY = "---\ndescription: {d}\ncreated: {c}\nupdated: {c}\n---\n{b}\n"


def _write(root: Path, name: str, created: str, body: str) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{name}.md").write_text(
        ENTRY.format(d="search backend change", c=created, b=body), encoding="utf-8"
    )


def test_last_month_and_a_body_date_pick_the_right_entry(make_service, home: Path) -> None:
    root = home / "memory"
    _write(root, "backend-a", "2026-07-01", "The search backend moved to Redis.")
    _write(root, "backend-b", "2026-06-12", "The search backend moved to Redis.")
    _write(root, "backend-c", "2025-01-05", "On 3 March 2026 the search backend moved to Redis.")
    service = make_service(model=False)  # today is 2026-07-01: backend-a is the freshest
    last_month = service.search("What changed in the search backend last month?", 3).results
    assert last_month[0].name == "backend-b"
    in_march = service.search("What happened to the search backend in March 2026?", 3).results
    assert in_march[0].name == "backend-c"
    undated = service.search("What happened to the search backend?", 3).results
    assert {h.name for h in undated} == {"backend-a", "backend-b", "backend-c"}
