"""Watchdog updates end to end: a file edit on disk reaches the map without an
explicit update call. Waits on an event (bounded), never a fixed sleep."""

from __future__ import annotations

import threading
from pathlib import Path

from repomap_helpers import ServiceFactory

from bonsai.services.repomap.records import BuildStats
from bonsai.settings import RepoMapSettings


def test_edit_on_disk_updates_only_that_file(repo: Path, make_service: ServiceFactory):
    service = make_service(repo, settings=RepoMapSettings(workers=1, debounce_s=0.05))
    service.get(tokens=300)
    parsed = threading.Event()
    updates: list[BuildStats] = []

    def on_update(stats: BuildStats) -> None:
        updates.append(stats)
        if stats.parsed:
            parsed.set()

    service.start_watching(on_update)
    core = repo / "pkg" / "core.py"
    core.write_text(core.read_text() + "\n\ndef watched_addition(x):\n    return x\n")
    assert parsed.wait(timeout=15), "watcher did not report the edit"
    assert sum(u.parsed for u in updates) == 1
    assert "watched_addition" in {d.name for d in service.tags["pkg/core.py"].definitions}
    result = service.get(tokens=300)
    assert not result.cached and result.reason.startswith("pkg/core.py changed its definitions")


def test_deleting_a_file_removes_it(repo: Path, make_service: ServiceFactory):
    service = make_service(repo, settings=RepoMapSettings(workers=1, debounce_s=0.05))
    service.build()
    removed = threading.Event()
    service.start_watching(lambda stats: removed.set() if stats.removed else None)
    (repo / "tools" / "leaf_utility.py").unlink()
    assert removed.wait(timeout=15), "watcher did not report the deletion"
    assert "tools/leaf_utility.py" not in service.tags


def test_stop_is_idempotent_and_ends_the_thread(repo: Path, make_service: ServiceFactory):
    service = make_service(repo, settings=RepoMapSettings(workers=1))
    service.start_watching()
    service.stop()
    service.stop()
    assert not any(t.name == "repomap-watch" for t in threading.enumerate())
