"""Through the memory service, on markdown files: a question asking who
employs the person a move note names reaches that person's job note, not the
other entries that share the name (which match the question's words equally,
that is not at all), with the vector lane on (the tiny test model) and off."""

from __future__ import annotations

from pathlib import Path

import pytest

ENTRY = "---\ndescription: {d}\ncreated: 2025-10-01\nupdated: 2025-10-01\n---\n{b}\n"
ENTRIES = {
    "move-mei": ("Mei relocated", "Mei moved to Halifax in October 2025 and now works remotely."),
    "job-mei": (
        "a role",
        "Mei Quintero works as a senior technical writer at Corvid Systems since 2023.",
    ),
    "hobby-mei": ("about Mei", "Outside work, Mei Quintero plays cello."),
    "note-paths": ("developer note", "Paths are normalised. Noted by Mei Quintero."),
}


@pytest.mark.parametrize("model", [False, True])
def test_who_employs_the_person_who_moved_reaches_the_job_note(
    make_service, home: Path, model: bool
) -> None:
    root = home / "memory"
    root.mkdir(parents=True, exist_ok=True)
    for name, (description, body) in ENTRIES.items():
        (root / f"{name}.md").write_text(ENTRY.format(d=description, b=body), encoding="utf-8")
    for i in range(30):  # unrelated notes, so that the question's words are rare
        (root / f"pad-{i:02d}.md").write_text(
            ENTRY.format(d="build note", b=f"The build cache keeps artefacts for batch {i}."),
            encoding="utf-8",
        )
    service = make_service(model=model)
    hits = service.search("Who employs the colleague that relocated to Halifax?", 3).results
    assert [h.name for h in hits[:2]] == ["move-mei", "job-mei"]
