"""Through the memory service: an entry the second hop reached from a source
dated in the question's window keeps its place under that source, above the
other entries of the same month (which match the window but not the path)."""

from __future__ import annotations

from pathlib import Path

ENTRY = "---\ndescription: {d}\ncreated: {c}\nupdated: {c}\n---\n{b}\n"
MOVES = [
    ("Hugo", "Tallinn", "2025-11-10"),
    ("Desmond", "Montreal", "2025-11-03"),
    ("Ingrid", "Porto", "2025-11-14"),
    ("Kwame", "Bergen", "2025-11-20"),
    ("Yuki", "Halifax", "2025-11-25"),
    ("Omar", "Cusco", "2025-11-28"),
]
SUBJECTS = ["parser", "logger", "cache layer", "build script", "rate limiter"]
RULES = ["retries failed requests", "uses UTC timestamps", "pins exact versions", "skips tests"]


def _write(root: Path, name: str, created: str, description: str, body: str) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{name}.md").write_text(
        ENTRY.format(d=description, c=created, b=body), encoding="utf-8"
    )


def _store(root: Path) -> None:
    for first, city, day in MOVES:
        _write(
            root,
            f"move-{first.lower()}",
            day,
            f"{first} relocated",
            f"{first} moved to {city} in November 2025 and now works remotely from there.",
        )
    for i in range(40):  # unrelated notes, so that the question's words are rare
        subject, rule = SUBJECTS[i % 5], RULES[i // 10]
        _write(root, f"note-{i:02d}", "2024-05-01", "developer note", f"The {subject} {rule}.")
    _write(
        root,
        "job-hugo",
        "2023-03-02",
        "Hugo Delacroix's role",
        "Hugo Delacroix works as a technical writer at Saffron Logistics; joined in March 2023.",
    )


def test_the_entry_reached_from_a_dated_source_stays_under_it(make_service, home: Path) -> None:
    _store(home / "memory")
    service = make_service(model=False)
    question = "What company does the person who moved to Tallinn in November 2025 work for?"
    hits = service.search(question, 5).results
    names = [h.name for h in hits]
    assert names[:2] == ["move-hugo", "job-hugo"]
    # the other moves of that month share the window and the words, not the path
    assert set(names[2:]) <= {f"move-{first.lower()}" for first, _, _ in MOVES}


def test_without_a_window_in_the_question_the_order_is_the_hop_s_own(
    make_service, home: Path
) -> None:
    _store(home / "memory")
    service = make_service(model=False)
    hits = service.search("What company does the person who moved to Tallinn work for?", 5)
    names = [h.name for h in hits.results]
    assert names[0] == "move-hugo"
    assert "job-hugo" in names[:2]
