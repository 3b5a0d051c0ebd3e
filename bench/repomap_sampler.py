"""The process-tree memory sampler of ``bench/repomap.py``, in a process of its own.

``bonsai.dev.tree_rss.TreeSampler`` is a thread that reads ``/proc`` every
10 ms; inside the measured process it takes the GIL a hundred times a second
from the build's own threads and its CPU counts as the build's (0.3-0.7 s of a
cold build of the stdlib copy at load 5-10). Here it samples the same tree (the
measured process and its children, this sampler left out) from outside:

    sampler = OutsideSampler(os.getpid())   # returns once it samples
    ...
    tree_mb, largest_child_mb = sampler.stop()
"""

from __future__ import annotations

import os
import subprocess
import sys

_SCRIPT = """
import os, sys
from bonsai.dev.tree_rss import TreeSampler
me = os.getpid()
sampler = TreeSampler(int(sys.argv[1]), lambda pid: pid != me).start()
print("ready", flush=True)
sys.stdin.read()
print(*sampler.stop(), flush=True)
"""


class OutsideSampler:
    """Peaks of ``pid`` plus its children (this sampler's process excluded)."""

    def __init__(self, pid: int | None = None) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-c", _SCRIPT, str(os.getpid() if pid is None else pid)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._proc.stdout is not None
        if self._proc.stdout.readline().strip() != "ready":
            raise RuntimeError("the memory sampler did not start")

    def stop(self) -> tuple[float, float]:
        """(tree, largest child) peaks in MB."""
        out, _ = self._proc.communicate("", timeout=60)
        tree, child = out.split()
        return float(tree), float(child)
