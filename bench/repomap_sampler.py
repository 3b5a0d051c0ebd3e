"""The process-tree sampler of ``bench/repomap.py``, in a process of its own.

``bonsai.dev.tree_rss.TreeSampler`` is a thread that reads ``/proc`` every
10 ms; inside the measured process it takes the GIL a hundred times a second
from the build's own threads and its CPU counts as the build's (0.3-0.7 s of a
cold build of the stdlib copy at load 5-10). Here it samples the same tree (the
measured process and its children, this sampler left out) from outside:

    sampler = OutsideSampler(os.getpid())   # returns once it samples
    ...
    tree_mb, largest_child_mb = sampler.stop()
    sampler.tree_cpu_s                      # the tree's CPU seconds meanwhile

Besides the memory peaks it follows the tree's CPU (``utime + stime`` of
``/proc/PID/stat``): the measured process's CPU since the start, plus each
child's CPU as last seen (a child started meanwhile counts whole, its start
included; a child's last < 10 ms before it exits are lost). The parse workers
are reaped on a daemon thread, so ``RUSAGE_CHILDREN`` read right after a build
may not hold them yet: this does not depend on when they are reaped.
"""

from __future__ import annotations

import os
import subprocess
import sys

_SCRIPT = """
import os, sys
from bonsai.dev.tree_rss import TreeSampler
TICK = os.sysconf("SC_CLK_TCK")

def cpu_s(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime

class CpuSampler(TreeSampler):
    def __init__(self, pid, counts):
        super().__init__(pid, counts)
        self.start_cpu = cpu_s(pid) or 0.0
        self.cpu = {}  # pid -> CPU seconds when last seen
    def sample(self):
        super().sample()
        for pid in (self.pid, *self.seen):
            seen = cpu_s(pid)
            if seen is not None:
                self.cpu[pid] = max(self.cpu.get(pid, 0.0), seen)
    def tree_cpu(self):
        own = self.cpu.get(self.pid, self.start_cpu) - self.start_cpu
        return own + sum(c for p, c in self.cpu.items() if p != self.pid)

me = os.getpid()
sampler = CpuSampler(int(sys.argv[1]), lambda pid: pid != me).start()
print("ready", flush=True)
sys.stdin.read()
tree, child = sampler.stop()
sampler.sample()
print(tree, child, sampler.tree_cpu(), flush=True)
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
        self.tree_cpu_s = 0.0
        assert self._proc.stdout is not None
        if self._proc.stdout.readline().strip() != "ready":
            raise RuntimeError("the memory sampler did not start")

    def stop(self) -> tuple[float, float]:
        """(tree, largest child) peaks in MB; the tree's CPU in ``tree_cpu_s``."""
        out, _ = self._proc.communicate("", timeout=60)
        tree, child, cpu = out.split()
        self.tree_cpu_s = float(cpu)
        return float(tree), float(child)
