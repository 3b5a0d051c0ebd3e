"""Watch both memory folders for hand edits (watchdog).

Each store folder is watched directly when it exists. A folder that does not
exist yet (typically ``<workspace>/.bonsai/memory``) is awaited by watching its
nearest existing ancestor without recursion; once the folder appears it is
watched too. The callback runs on watchdog's thread with the changed path;
opening or reading a file without writing it is not a change.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from watchdog.events import (
    EVENT_TYPE_CLOSED_NO_WRITE,
    EVENT_TYPE_OPENED,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

log = logging.getLogger("bonsai.memory.watch")

# events that a read raises (inotify reports opens and closes without a write)
_READ_ONLY = frozenset({EVENT_TYPE_OPENED, EVENT_TYPE_CLOSED_NO_WRITE})


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: MemoryWatcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in _READ_ONLY:
            return  # bonsai's own reads (a scan opens every new file) change nothing
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            if raw:
                self.watcher.handle(Path(str(raw)), is_directory=event.is_directory)


class MemoryWatcher:
    """Fires ``callback(path)`` when a ``*.md`` file in a store folder changes."""

    def __init__(self, roots: list[Path], callback: Callable[[Path], None]) -> None:
        self.roots = [root.absolute() for root in roots]
        self.callback = callback
        self._observer: BaseObserver = Observer()
        self._handler = _Handler(self)
        self._watched: set[Path] = set()
        self._lock = threading.Lock()

    def start(self) -> None:
        for root in self.roots:
            self._arm(root)
        self._observer.start()

    def stop(self) -> None:
        self._observer.stop()
        self._observer.join(timeout=5)

    def _arm(self, root: Path) -> bool:
        """Watch ``root`` if it exists, else its nearest existing ancestor;
        true when a new watch was added."""
        target = root
        while not target.is_dir() and target != target.parent:
            target = target.parent
        with self._lock:
            if target in self._watched:
                return False
            self._watched.add(target)
        self._observer.schedule(self._handler, str(target), recursive=False)
        return True

    def _announce_existing(self, root: Path) -> None:
        """Files created together with their folder may predate the new watch."""
        for path in sorted(root.glob("*.md")):
            self._fire(path)

    def _fire(self, path: Path) -> None:
        try:
            self.callback(path)
        except Exception:
            log.exception("memory watch callback failed for %s", path)

    def handle(self, path: Path, *, is_directory: bool) -> None:
        path = path.absolute()
        for root in self.roots:
            if is_directory and (path == root or root.is_relative_to(path)):
                if self._arm(root) and root.is_dir():
                    self._announce_existing(root)
            elif path.parent == root and path.suffix == ".md":
                self._fire(path)
                return
