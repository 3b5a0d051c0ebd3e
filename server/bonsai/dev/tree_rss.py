"""Peak resident memory of a process tree, summed at the same moment: a thread
reads ``VmRSS`` of a process and of its children from ``/proc`` every 10 ms.
Used by the repository-map benchmark and its memory test (Linux only: elsewhere
every reading is 0)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path


def rss_kb(pid: int) -> int:
    """Resident memory of ``pid`` in KiB (0 once it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def children(pid: int) -> list[int]:
    """The direct children of ``pid`` (of every thread of it)."""
    out: list[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            out += [int(c) for c in Path(f"/proc/{pid}/task/{tid}/children").read_text().split()]
    except OSError:
        pass
    return out


def children_running(pid: int, module: str) -> list[int]:
    """The children of ``pid`` that run ``module`` (an exited one not yet reaped has no
    command line, so it is not among them)."""
    return [child for child in children(pid) if runs_module(child, module)]


def runs_module(pid: int, module: str) -> bool:
    """Does ``pid`` run ``module`` (its command line names it)? A child still
    between fork and exec shares, and reports, its parent's memory."""
    try:
        return module.encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


class TreeSampler:
    """Peaks of ``pid`` (default: this process) plus its children, and of the
    largest child, from ``start()`` until ``stop()``. ``counts(child)`` picks the
    children to include (default: all)."""

    def __init__(
        self,
        pid: int | None = None,
        counts: Callable[[int], bool] | None = None,
        interval_s: float = 0.01,
    ) -> None:
        self.pid = os.getpid() if pid is None else pid
        self.tree_kb = self.child_kb = 0
        self.seen: set[int] = set()  # every child counted at least once
        self._counts = counts
        self._interval = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> TreeSampler:
        self._thread.start()
        return self

    def sample(self) -> None:
        kids = [k for k in children(self.pid) if self._counts is None or self._counts(k)]
        self.seen.update(kids)
        sizes = [rss_kb(k) for k in kids]
        self.tree_kb = max(self.tree_kb, rss_kb(self.pid) + sum(sizes))
        self.child_kb = max([self.child_kb, *sizes])

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            self.sample()

    def stop(self) -> tuple[float, float]:
        """(tree, largest child) peaks in MB."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        return self.tree_kb / 1024, self.child_kb / 1024
