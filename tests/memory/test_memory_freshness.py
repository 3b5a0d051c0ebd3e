"""While the watcher runs, a query never lists or stats the memory files, yet a
hand edit, a delete and a rename are seen by the next query."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from bonsai.services.memory import MemoryWriteArgs

ENTRY = "---\ndescription: {d}\n---\n{b}\n"


@contextmanager
def counted_io(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, list[str]]]:
    calls: dict[str, list[str]] = {"scandir": [], "stat": []}
    real_scandir, real_stat = os.scandir, os.stat

    def scandir(path: object = ".") -> object:
        calls["scandir"].append(str(path))
        return real_scandir(path)  # type: ignore[arg-type]

    def stat(path: object, *args: object, **kwargs: object) -> os.stat_result:
        calls["stat"].append(str(path))
        return real_stat(path, *args, **kwargs)  # type: ignore[arg-type]

    with monkeypatch.context() as patch:
        patch.setattr(os, "scandir", scandir)
        patch.setattr(os, "stat", stat)
        yield calls


@pytest.fixture
def watched(make_service, home: Path) -> Iterator[tuple[object, Callable[[], None]]]:
    """A service with its watcher running and resyncing like the daemon does;
    ``settle()`` waits until the watcher has handled every change so far."""
    service = make_service(model=False)
    (home / "memory").mkdir()
    service.write(
        MemoryWriteArgs(name="deploy-steps", fact="Deploy with the blue script.", tier="user")
    )
    handled = threading.Event()
    # the daemon never resyncs beside a query (both run on its loop): neither here
    lock = threading.Lock()
    search = service.search

    def searched(*args: object, **kwargs: object) -> object:
        with lock:
            return search(*args, **kwargs)

    service.search = searched

    def changed(_: Path) -> None:
        with lock:
            service.sync()
        handled.set()

    def settle() -> None:
        assert handled.wait(10), "the watcher never reported the change"
        while handled.wait(0.3):  # more events of the same change (create + modify)
            handled.clear()

    watcher = service.watch(changed)
    try:
        yield service, settle
    finally:
        watcher.stop()


def _query_files(calls: dict[str, list[str]], home: Path) -> list[str]:
    store = str(home / "memory")
    return [p for p in calls["stat"] + calls["scandir"] if p != store and p.startswith(store)]


def test_a_query_reads_no_listing_and_no_file_stat(watched, home: Path, monkeypatch) -> None:
    service, _ = watched
    service.search("deploy script")  # first view built
    time.sleep(0.5)  # a late watcher event of the setup write may still arrive: let it land
    service.search("deploy script")
    with counted_io(monkeypatch) as calls:
        hits = service.search("deploy script").results
    assert [h.name for h in hits] == ["deploy-steps"]
    assert calls["scandir"] == []
    assert _query_files(calls, home) == []


def test_hand_edit_delete_and_rename_are_seen_without_listing(
    watched, home: Path, monkeypatch
) -> None:
    service, settle = watched
    folder = home / "memory"
    service.search("deploy")
    # an in-place edit (same inode, the folder's mtime does not move)
    with open(folder / "deploy-steps.md", "r+", encoding="utf-8") as fh:
        fh.write(ENTRY.format(d="deploy", b="Deploy with the green pipeline instead."))
        fh.truncate()
    settle()
    with counted_io(monkeypatch) as calls:
        names = [h.name for h in service.search("green pipeline").results]
    assert names == ["deploy-steps"] and calls["scandir"] == []

    os.rename(folder / "deploy-steps.md", folder / "ship-it.md")
    settle()
    with counted_io(monkeypatch) as calls:
        names = [h.name for h in service.search("green pipeline").results]
    assert names == ["ship-it"] and calls["scandir"] == []

    (folder / "ship-it.md").unlink()
    settle()
    with counted_io(monkeypatch) as calls:
        assert service.search("green pipeline").results == []
    assert calls["scandir"] == [] and _query_files(calls, home) == []


def test_without_a_watcher_every_query_checks_the_files(make_service, home: Path) -> None:
    service = make_service(model=False)
    service.write(
        MemoryWriteArgs(name="deploy-steps", fact="Deploy with the blue script.", tier="user")
    )
    path = home / "memory" / "deploy-steps.md"
    path.write_text(ENTRY.format(d="deploy", b="Deploy with the red button."), encoding="utf-8")
    assert [h.name for h in service.search("red button").results] == ["deploy-steps"]
