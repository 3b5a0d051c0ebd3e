"""bonsai's own reads of the memory files are not changes.

A build reads every entry file; inotify reports each open and each close
without a write. Were those changes, the daemon would resync (and list the
folder) once per event after every build: thousands of times for a large store.
"""

from __future__ import annotations

import threading
from pathlib import Path

from bonsai.services.memory import MemoryWriteArgs


def test_reading_the_store_fires_no_change_but_a_write_does(make_service, home: Path) -> None:
    service = make_service(model=False)
    (home / "memory").mkdir()
    for i in range(5):
        service.write(
            MemoryWriteArgs(name=f"fact-{i}", fact=f"Fact number {i} about deploys.", tier="user")
        )
    seen: list[str] = []
    sentinel = threading.Event()

    def changed(path: Path) -> None:
        seen.append(path.name)
        if path.name == "sentinel.md":
            sentinel.set()

    watcher = service.watch(changed)
    try:
        assert len(service.list()) == 5  # a full scan: every file opened and read
        assert service.sync().skipped is False
        for path in sorted((home / "memory").glob("*.md")):
            path.read_bytes()
        # events arrive in order: once the sentinel's is in, the reads' would be too
        (home / "memory" / "sentinel.md").write_text(
            "---\ndescription: s\n---\nsentinel\n", encoding="utf-8"
        )
        assert sentinel.wait(10), "the watcher never reported the sentinel"
        assert set(seen) == {"sentinel.md"}
        assert [e.name for e in service.list()][-1] == "sentinel"
    finally:
        watcher.stop()
