"""Where a polled ``bonsai/ctx/get``'s time goes: the bench's side of ``request_trace``.

Each poll carries the client's stamps (sent, first header line read, body read,
parsed) and, when the daemon traces (``BONSAI_CTX_TRACE=1``, ``bench/load.py
--trace``), the daemon's and its view process's stamps in between. Consecutive
stamps make phases (``sent→read``: the client's write, the kernel and the daemon's
loop before it read the frame; ``asked→child_read``: the request waiting in the pipe
while the child computed others; ``framed→head``: the answer's write and the bench's
own loop before it read it; ...). The breakdown compares the slowest 5% of polls
with all of them, phase by phase, and counts which path each took (kept, a view
computed because its session moved, because the kept one expired, shared with
another poller's). The bench's own loop lag (a 5 ms ticker in the measuring
process) is reported per poll too: a tail the measuring side makes is the bench's,
not the daemon's.
"""

from __future__ import annotations

import asyncio
import bisect
import itertools
import time
from collections import Counter, defaultdict
from typing import Any

TICK_S = 0.005
PATHS = ("kept", "shared", "new:first", "new:version", "new:inputs", "new:expired")
TAIL = 0.05  # the slowest 5%


class LagMeter:
    """The measuring process's own event-loop lag: how late a 5 ms sleep wakes."""

    def __init__(self) -> None:
        self.at: list[float] = []
        self.late_ms: list[float] = []

    async def run(self) -> None:
        while True:
            before = time.time()
            await asyncio.sleep(TICK_S)
            now = time.time()
            self.at.append(now)
            self.late_ms.append(max(0.0, (now - before - TICK_S) * 1000))

    def worst(self, start: float, end: float) -> float:
        """The largest lag of a tick that woke within [start, end] (its sleep overlapping)."""
        lo = bisect.bisect_left(self.at, start)
        hi = bisect.bisect_right(self.at, end + TICK_S)
        return max(self.late_ms[lo:hi], default=0.0)


def points(stamps: dict[str, Any]) -> list[tuple[str, float]]:
    """The poll's stamps in the order they were made: the client's around the daemon's."""
    out = [("sent", float(stamps["sent"]))]
    out += [(str(name), float(at)) for name, at in stamps.get("trace") or []]
    out += [(name, float(stamps[name])) for name in ("head", "body", "parsed") if name in stamps]
    return out


def phases(stamps: dict[str, Any]) -> list[tuple[str, float]]:
    """``(a→b, ms)`` for each pair of consecutive stamps."""
    marks = points(stamps)
    return [(f"{a}→{b}", (tb - ta) * 1000) for (a, ta), (b, tb) in itertools.pairwise(marks)]


def path(stamps: dict[str, Any]) -> str:
    """Why the answer was computed or kept, and where (``+thread``: the view process
    could not answer, not started yet or gone)."""
    names = {str(name) for name, _ in stamps.get("trace") or []}
    found = [p for p in PATHS if p in names]
    label = found[0] if found else ("untraced" if not stamps.get("trace") else "other")
    if "thread_start" in names:
        label += "+thread"
    return label + ("+edited" if "edited" in names else "")


def timeline(group: list[dict[str, Any]], start: float, end: float, parts: int = 10) -> str:
    """How many of ``group`` were sent in each tenth of the run."""
    counts = [0] * parts
    span = max(end - start, 1e-9)
    for stamps in group:
        at = (float(stamps["sent"]) - start) / span
        counts[min(parts - 1, max(0, int(at * parts)))] += 1
    return " ".join(str(c) for c in counts)


def total_ms(stamps: dict[str, Any]) -> float:
    return (float(stamps["parsed"]) - float(stamps["sent"])) * 1000


def breakdown(polls: list[dict[str, Any]], lag: LagMeter | None) -> list[str]:
    """Lines: the phases of the slowest 5% against all polls, the paths, the bench's lag."""
    if not polls:
        return []
    ordered = sorted(polls, key=total_ms)
    slow = ordered[max(0, int(len(ordered) * (1 - TAIL))) :]
    lines = [
        f"  ctx/get by phase: all {len(polls):,} polls against the slowest 5% "
        f"({len(slow):,}, from {total_ms(slow[0]):.1f} ms); mean ms per poll "
        "(a phase a poll did not take counts 0)"
    ]
    every, tail = _means(polls), _means(slow)
    slow_total = sum(total_ms(s) for s in slow) / len(slow)
    names = sorted(set(every) | set(tail), key=lambda n: -tail.get(n, 0.0))
    for name in names:
        t = tail.get(name, 0.0)
        if max(t, every.get(name, 0.0)) < 0.05:
            continue
        lines.append(
            f"    {name[:40]:40} all {every.get(name, 0.0):8.2f}   slowest {t:8.2f}"
            f"   ({100 * t / max(slow_total, 1e-9):4.0f}% of theirs)"
        )
    for label, group in (("all", polls), ("slowest", slow)):
        counts = Counter(path(s) for s in group)
        lines.append(
            f"    paths, {label}: "
            + ", ".join(f"{k} {v:,} ({100 * v / len(group):.0f}%)" for k, v in counts.most_common())
        )
    start = min(float(s["sent"]) for s in polls)
    end = max(float(s["parsed"]) for s in polls)
    lines.append(
        f"    the slowest 5% sent in each tenth of the run ({end - start:.0f} s): "
        f"{timeline(slow, start, end)}"
    )
    if lag is not None and lag.at:
        worst = [lag.worst(float(s["sent"]), float(s["parsed"])) for s in slow]
        every_lag = [lag.worst(float(s["sent"]), float(s["parsed"])) for s in polls]
        ticks = sorted(lag.late_ms)
        lines.append(
            f"    the bench's own loop: a 5 ms tick late by p50 {ticks[len(ticks) // 2]:.1f} / "
            f"p99 {ticks[min(len(ticks) - 1, int(len(ticks) * 0.99))]:.1f} / max {ticks[-1]:.1f} ms; "
            f"worst lag within a poll: all {sum(every_lag) / len(every_lag):.1f} ms, "
            f"slowest {sum(worst) / len(worst):.1f} ms (mean)"
        )
    return lines


def _means(group: list[dict[str, Any]]) -> dict[str, float]:
    sums: dict[str, float] = defaultdict(float)
    for stamps in group:
        for name, ms in phases(stamps):
            sums[name] += ms
    return {name: total / len(group) for name, total in sums.items()}
