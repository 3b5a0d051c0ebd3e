"""Turns on a fixed schedule: the open-loop side of ``bench/load.py --rate``.

A closed-loop client starts its next turn as soon as the last one ended, so a daemon
that ends turns sooner (kept provider connections) is offered more events per second,
and its latencies mix what it does per event with how much it is asked to do. Here
each sending client starts turns at ``start + offset + k * period`` whatever the last
one did: two daemons (or two stream servers) are offered the same events per second.
A slot that comes while the client's previous turn still runs cannot start a second
turn on the session (turns of one session queue behind each other), so that turn
starts when the previous one ends and is counted **late**, with how late it started:
nothing is skipped, and a daemon that cannot keep up shows as late turns, not as a
lower offered rate.

The clock and the sleep are parameters, so the schedule is tested on a virtual clock
(``tests/bench/test_open_loop.py``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field


@dataclass
class Schedule:
    """What one client's schedule did: every slot in the window, late or on time."""

    slots: int = 0  # turns whose slot fell inside the window (all were run)
    late: int = 0  # of those, turns whose slot came while the previous turn still ran
    start_lag_ms: list[float] = field(default_factory=list)  # each turn's start - its slot

    def merge(self, other: Schedule) -> None:
        self.slots += other.slots
        self.late += other.late
        self.start_lag_ms += other.start_lag_ms


def period_for(rate: float, tokens: int, clients: int) -> float:
    """Seconds between one sender's turn starts so that the clients receive ``rate``
    delta events per second in all: each turn of ``tokens`` deltas reaches every client
    attached to its session, so one round (every sender one turn) is ``tokens *
    clients`` events."""
    if rate <= 0:
        raise ValueError(f"--rate must be positive, not {rate:g}")
    return tokens * clients / rate


def offsets(senders: int, period: float) -> list[float]:
    """Each sender's first slot, spread evenly over one period (not all at once)."""
    return [i * period / senders for i in range(senders)]


async def on_schedule(
    turn: Callable[[], Awaitable[None]],
    *,
    start: float,
    period: float,
    until: float,
    now: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> Schedule:
    """Run ``turn`` once per slot ``start + k * period`` before ``until``: at its slot,
    or when the previous turn ends if that is later (then it is late)."""
    if period <= 0:
        raise ValueError(f"a schedule's period must be positive, not {period:g}")
    out = Schedule()
    ended = -float("inf")
    k = 0
    while (slot := start + k * period) < until:
        k += 1
        out.slots += 1
        if ended > slot:
            out.late += 1
        wait = slot - now()
        if wait > 0:
            await sleep(wait)
        out.start_lag_ms.append(max(0.0, now() - slot) * 1000)
        await turn()
        ended = now()
    return out
