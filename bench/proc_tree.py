"""The daemon's process tree as the benches measure it: the daemon and its view process.

RSS counts a page shared by both (copy-on-write, or a library mapped twice) once per
process; PSS (``/proc/PID/smaps_rollup``) splits it between them, so the tree's PSS
sum is what the two cost the machine together.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from bonsai.dev.tree_rss import children_running, rss_kb

VIEW_CHILD = "bonsai.session.view_child"


def view_children(pid: int) -> list[int]:
    """The view processes whose parent is ``pid``."""
    return children_running(pid, VIEW_CHILD)


def rss_mb(pid: int) -> float:
    return rss_kb(pid) / 1024


def pss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def cpu_of(pid: int) -> float:
    """User + system CPU seconds of ``pid`` (0 once it is gone)."""
    return _stat_cpu(Path(f"/proc/{pid}/stat"))


def cpu_of_task(pid: int, tid: int) -> float:
    """User + system CPU seconds of one thread ``tid`` of ``pid`` (0 once it is gone)."""
    return _stat_cpu(Path(f"/proc/{pid}/task/{tid}/stat"))


def _stat_cpu(stat: Path) -> float:
    try:
        fields = stat.read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class TreeSampler:
    """Peaks of the tree's RSS and PSS sums, and each view process's CPU as last seen."""

    pid: int
    rss_peak: float = 0.0
    pss_peak: float = 0.0
    child_rss_peak: float = 0.0
    child_cpu: dict[int, float] = field(default_factory=dict)

    def sample(self) -> None:
        kids = view_children(self.pid)
        child_rss = sum(rss_mb(k) for k in kids)
        self.child_rss_peak = max(self.child_rss_peak, child_rss)
        self.rss_peak = max(self.rss_peak, rss_mb(self.pid) + child_rss)
        self.pss_peak = max(self.pss_peak, pss_mb(self.pid) + sum(pss_mb(k) for k in kids))
        for kid in kids:
            self.child_cpu[kid] = max(self.child_cpu.get(kid, 0.0), cpu_of(kid))

    def children_cpu_s(self) -> float:
        return sum(self.child_cpu.values())
