"""Watch a workspace with watchdog and hand debounced batches of changed paths on.

Events are collected into a set; once no event has arrived for ``debounce_s``
the batch goes to ``on_changes`` on the watcher's own thread (never on
watchdog's emitter thread). Reads (opened/closed-no-write) are ignored, and so is
everything under ``.git/``.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

log = logging.getLogger(__name__)

_IGNORED_TYPES = frozenset({"opened", "closed_no_write"})


class _Collector(FileSystemEventHandler):
    def __init__(self, watcher: RepoWatcher) -> None:
        self._watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in _IGNORED_TYPES:
            return
        paths = [event.src_path, getattr(event, "dest_path", "")]
        self._watcher.add([os.fsdecode(p) for p in paths if p])


class RepoWatcher:
    """Debounced watchdog observer over ``root``."""

    def __init__(
        self,
        root: Path,
        on_changes: Callable[[list[str]], None],
        debounce_s: float = 0.25,
    ) -> None:
        self.root = root
        self._on_changes = on_changes
        self._debounce_s = debounce_s
        self._pending: set[str] = set()
        self._last_event = 0.0
        self._cond = threading.Condition()
        self._stopping = False
        self._observer: Observer | None = None  # type: ignore[valid-type]
        self._thread: threading.Thread | None = None

    def add(self, paths: list[str]) -> None:
        git_dir = str(self.root / ".git")
        fresh = [p for p in paths if not (p == git_dir or p.startswith(git_dir + os.sep))]
        if not fresh:
            return
        with self._cond:
            self._pending.update(fresh)
            self._last_event = time.monotonic()
            self._cond.notify()

    def start(self) -> None:
        if self._observer is not None:
            return
        observer = Observer()
        observer.schedule(_Collector(self), str(self.root), recursive=True)
        observer.daemon = True
        observer.start()
        self._observer = observer
        self._thread = threading.Thread(target=self._run, name="repomap-watch", daemon=True)
        self._thread.start()

    def _next_batch(self) -> list[str] | None:
        with self._cond:
            while not self._pending and not self._stopping:
                self._cond.wait()
            while not self._stopping:
                quiet = time.monotonic() - self._last_event
                if quiet >= self._debounce_s:
                    break
                self._cond.wait(self._debounce_s - quiet)
            if self._stopping:
                return None
            batch = sorted(self._pending)
            self._pending.clear()
            return batch

    def _run(self) -> None:
        while (batch := self._next_batch()) is not None:
            try:
                self._on_changes(batch)
            except Exception:  # keep watching; the failure is logged, not hidden
                log.exception("repomap: updating %d changed paths failed", len(batch))

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._observer = None
        self._thread = None
