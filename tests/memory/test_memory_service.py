"""MemoryService end to end: sync, search, recall per turn, watching."""

from __future__ import annotations

import threading
from pathlib import Path

from bonsai.services.memory import InjectionState, MemoryWriteArgs


def words(text: str) -> int:
    return len(text.split())


def _seed(service) -> None:
    facts = [
        ("ponyc-build", "ponyc is built with make configure then make build.", "project"),
        ("prefers-ruff", "Prefer ruff for formatting and linting python code.", "user"),
        ("sqlite-busy", "apsw needs a busy timeout or writers fail when the database is locked.",
         "user"),
        ("utc-only", "Store timestamps in utc, never local time.", "user"),
    ]  # fmt: skip
    for name, fact, tier in facts:
        service.write(MemoryWriteArgs(name=name, fact=fact, tier=tier))


def test_search_reports_both_lanes(make_service) -> None:
    service = make_service()
    _seed(service)
    result = service.search("the database is locked by another writer", limit=3)
    assert result.embeddings == "on"
    top = result.results[0]
    assert (top.name, top.tier) == ("sqlite-busy", "user")
    assert top.lanes.bm25 is not None and top.lanes.embedding is not None


def test_paraphrase_found_only_through_embeddings(make_service) -> None:
    service = make_service()
    _seed(service)
    result = service.search("which toolchain steps compile the binary", limit=3)
    assert [r.name for r in result.results] == ["ponyc-build"]
    assert result.results[0].lanes.bm25 is None


def test_without_a_model_search_is_bm25_only_and_says_why(make_service) -> None:
    service = make_service(model=False)
    _seed(service)
    result = service.search("which toolchain steps compile the binary", limit=3)
    assert result.results == []
    assert result.embeddings.startswith("off: no embedding model at ")
    hits = service.search("database locked", limit=3).results
    assert [h.name for h in hits] == ["sqlite-busy"] and hits[0].lanes.embedding is None


def test_embeddings_switched_off_by_environment(make_service) -> None:
    service = make_service(env={"BONSAI_MEMORY_EMBEDDINGS": "off"})
    _seed(service)
    assert service.search("ruff", 3).embeddings == "off: disabled by BONSAI_MEMORY_EMBEDDINGS=off"


def test_sync_is_skipped_until_a_file_changes(make_service, home: Path) -> None:
    service = make_service()
    _seed(service)
    service.sync()
    assert service.sync().skipped
    path = home / "memory" / "utc-only.md"
    path.write_text(path.read_text().replace("local time", "local time ever"))
    report = service.sync()
    assert (report.skipped, report.updated) == (False, 1)
    assert service.sync().skipped


def test_recall_injects_relevant_entries_once(make_service) -> None:
    service = make_service()
    _seed(service)
    state = InjectionState()
    first = service.recall_for_turn("why is the sqlite database locked for writers?", state, words)
    assert [e.name for e in first.entries] == ["sqlite-busy"]
    assert first.text is not None and "busy timeout" in first.text
    again = service.recall_for_turn("the database is still locked", first.state, words)
    assert "sqlite-busy" not in [e.name for e in again.entries]


def test_small_talk_recalls_nothing(make_service) -> None:
    service = make_service()
    _seed(service)
    for message in ("thanks!", "ok, go on", "ok, use that python file"):
        result = service.recall_for_turn(message, InjectionState(), words)
        assert result.text is None, message


def test_disabled_entries_and_disabled_memory_are_not_recalled(make_service) -> None:
    service = make_service()
    _seed(service)
    service.set_enabled("sqlite-busy", False)
    result = service.recall_for_turn("sqlite database locked busy", InjectionState(), words)
    assert "sqlite-busy" not in [e.name for e in result.entries]
    off = make_service(enabled=False)
    assert off.recall_for_turn("sqlite database locked", InjectionState(), words).text is None


def test_status_summarises_stores(make_service, workspace: Path) -> None:
    service = make_service()
    _seed(service)
    (workspace / ".gitignore").write_text(".bonsai/\n")
    status = service.status()
    assert (status.entries, status.project_entries, status.user_entries) == (4, 1, 3)
    assert status.embeddings == "on"
    assert status.index_line.startswith("memory: 4 entries (1 project, 3 user): ponyc-build")
    assert status.gitignore_advisory is not None


def test_watch_fires_on_hand_edits_in_both_tiers(make_service, home: Path, workspace: Path) -> None:
    service = make_service(model=False)
    (home / "memory").mkdir()
    seen: list[Path] = []
    changed = threading.Event()

    def on_change(path: Path) -> None:
        seen.append(path)
        changed.set()

    def saw(name: str) -> bool:
        for _ in range(100):
            if name in {p.name for p in seen}:
                return True
            changed.wait(0.05)
            changed.clear()
        return False

    watcher = service.watch(on_change)
    try:
        (home / "memory" / "hand.md").write_text("---\ndescription: d\n---\nb\n")
        assert saw("hand.md")
        project = workspace / ".bonsai" / "memory"
        project.mkdir(parents=True)  # the project store appears after watching started
        (project / "later.md").write_text("---\ndescription: d\n---\nb\n")
        assert saw("later.md")
    finally:
        watcher.stop()


def test_a_model_built_while_running_is_picked_up(make_service, home: Path, tiny_model_dir) -> None:
    import shutil

    service = make_service(model=False)
    _seed(service)
    assert service.search("ruff", 3).embeddings.startswith("off: no embedding model")
    shutil.copytree(tiny_model_dir, home / "cache" / "memory-model")
    result = service.search("which toolchain steps compile the binary", 3)
    assert result.embeddings == "on"
    assert [r.name for r in result.results] == ["ponyc-build"]
