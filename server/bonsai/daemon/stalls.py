"""The event loop's stalls: how late it ran, and what held it (a debug monitor).

Off unless ``BONSAI_STALLS`` names a file: the daemon then writes a JSON report
there when it stops (:func:`from_env`, :meth:`StallMonitor.write`); ``SIGUSR1``
starts the report afresh (a benchmark's measured window). Three probes:

* **a tick** every ``TICK_S`` (5 ms, ``loop.call_at``): how late each tick ran is
  the time nothing else could run on the loop. A tick later than ``STALL_S`` is a
  stall, counted in a histogram of lateness and given a cause;
* **every collection of the cyclic garbage collector**, timed by generation
  (``gc.callbacks``), on any thread (a collection holds the GIL: on the view
  worker's thread it stops the loop too);
* **every loop callback**, timed (``asyncio.events.Handle._run`` wrapped while the
  monitor runs; callbacks of this loop only): a callback as long as a stall is
  named (a request's task by its method, ``rpc._feature``; another task by its
  coroutine; a plain callback by its function).

A stall's cause is the collection(s) inside it when they make at least half of
its lateness (``gc gen2``), else the named callback that overlaps it most when
that one does (``callback <name>``), else, by the loop thread's CPU time since the
tick before (``loop_cpu_ms``): ``busy`` (the loop ran many shorter callbacks) or
``waiting`` (it was not scheduled: another thread held the GIL, or the machine had
no free core). A callback's own time is wall time: its stall's ``loop_cpu_ms``
says how much of it the loop computed.

asyncio's own slow-callback warning needs debug mode (``PYTHONASYNCIODEBUG=1``, far
too slow for a measurement: it records a traceback for every handle); with the
monitor on, its threshold is ``STALL_S`` too, so a profiling run in debug mode logs
the same callbacks to the daemon's log.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import itertools
import json
import logging
import os
import signal
import threading
import time
from asyncio import events
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bonsai.services.fs.atomic import atomic_write

log = logging.getLogger("bonsai.stalls")
ENV = "BONSAI_STALLS"
TICK_S = 0.005
STALL_S = 0.005
KEEP_S = 2.0  # how long a callback or a collection is kept to explain a later stall
BUCKETS_MS = (5, 10, 20, 50, 100, 200, 500, 1000)
_WORST = 12


@dataclass(slots=True)
class _Span:
    """Something that ran from ``start`` to ``end`` (perf_counter seconds)."""

    start: float
    end: float
    name: str


@dataclass
class _Tally:
    count: int = 0
    total_s: float = 0.0
    max_s: float = 0.0
    cpu_s: float | None = None  # the thread's CPU time, where it was measured

    def add(self, seconds: float, cpu: float | None = None) -> None:
        self.count += 1
        self.total_s += seconds
        self.max_s = max(self.max_s, seconds)
        if cpu is not None:
            self.cpu_s = (self.cpu_s or 0.0) + cpu

    def report(self) -> dict[str, float]:
        out = {
            "count": self.count,
            "total_ms": round(self.total_s * 1000, 2),
            "max_ms": round(self.max_s * 1000, 2),
        }
        if self.cpu_s is not None:
            out["cpu_ms"] = round(self.cpu_s * 1000, 2)
        return out


@dataclass
class _Stall:
    at_s: float
    late_ms: float
    cause: str
    gc_ms: float
    callback: str
    callback_ms: float
    loop_cpu_ms: float

    def report(self) -> dict[str, Any]:
        return {k: round(v, 2) if isinstance(v, float) else v for k, v in vars(self).items()}


def overlap(span: _Span, start: float, end: float) -> float:
    return max(0.0, min(span.end, end) - max(span.start, start))


def bucket(late_ms: float) -> str:
    """The histogram bucket of a stall, e.g. ``"5-10"`` or ``">1000"``."""
    for low, high in itertools.pairwise(BUCKETS_MS):
        if late_ms < high:
            return f"{low}-{high}"
    return f">{BUCKETS_MS[-1]}"


def callback_name(handle: events.Handle) -> str:
    """A loop callback in words: a task by its name (a request's: its method) or its
    coroutine, anything else by its function's qualified name."""
    callback = handle._callback  # type: ignore[attr-defined]
    owner = getattr(callback, "__self__", None)
    if isinstance(owner, asyncio.Task):
        name = owner.get_name()
        if not name.startswith("Task-"):
            return f"task {name}"
        coro = owner.get_coro()
        return f"task {getattr(coro, '__qualname__', type(coro).__name__)}"
    while isinstance(callback, functools.partial):
        callback = callback.func
    qualname = getattr(callback, "__qualname__", None) or type(callback).__name__
    return str(qualname)


@dataclass
class StallMonitor:
    """Ticks on ``loop``, times its callbacks and every collection; :meth:`report` sums up."""

    loop: asyncio.AbstractEventLoop
    tick_s: float = TICK_S
    stall_s: float = STALL_S
    started: float = 0.0
    stopped: float | None = None
    ticks: int = 0
    stalls: list[_Stall] = field(default_factory=list)
    gc_by_gen: dict[int, _Tally] = field(default_factory=dict)
    gc_off_loop: int = 0
    slow: dict[str, _Tally] = field(default_factory=dict)
    _recent: list[_Span] = field(default_factory=list)  # slow callbacks and collections
    _gc_start: float | None = None
    _gc_cpu: float = 0.0
    _expected: float = 0.0
    _last_cpu: float = 0.0
    _last_tick: float = 0.0
    _timer: asyncio.TimerHandle | None = None
    _original_run: Callable[[events.Handle], None] | None = None
    _loop_thread: int = 0

    # -------------------------------------------------------------- start / stop
    def start(self) -> None:
        self.started = self._last_tick = time.perf_counter()
        self.stopped = None
        self._last_cpu = time.thread_time()
        self._loop_thread = threading.get_ident()
        gc.callbacks.append(self._on_gc)
        self._wrap_callbacks()
        self.loop.slow_callback_duration = self.stall_s  # asyncio's own, in debug mode
        self._schedule()

    def reset(self) -> None:
        """Forget what was seen so far: the report covers from now on (``SIGUSR1``)."""
        self.started = time.perf_counter()
        self.ticks = self.gc_off_loop = 0
        self.stalls, self.gc_by_gen, self.slow = [], {}, {}

    def stop(self) -> None:
        """Stop watching (idempotent): the report covers the time until now."""
        if self.stopped is None:
            self.stopped = time.perf_counter()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._on_gc in gc.callbacks:
            gc.callbacks.remove(self._on_gc)
        if self._original_run is not None:
            events.Handle._run = self._original_run  # type: ignore[method-assign,assignment]
            self._original_run = None

    def write(self, path: Path) -> None:
        """Stop, and write the report as JSON to ``path`` (private, atomically)."""
        self.stop()
        try:
            atomic_write(path, json.dumps(self.report(), indent=1).encode("utf-8"), mode=0o600)
        except OSError as error:  # a report that cannot be written never fails the stop
            log.warning("could not write the stall report to %s: %s", path, error)

    # -------------------------------------------------------------- probes
    def _schedule(self) -> None:
        self._expected = self.loop.time() + self.tick_s
        self._timer = self.loop.call_at(self._expected, self._tick)

    def _tick(self) -> None:
        late = self.loop.time() - self._expected
        now, cpu = time.perf_counter(), time.thread_time()
        self.ticks += 1
        if late >= self.stall_s:
            self._record(now - late, now, late, cpu - self._last_cpu)
        self._forget(now - KEEP_S)
        self._last_tick, self._last_cpu = now, cpu
        self._schedule()

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        now, cpu = time.perf_counter(), time.thread_time()  # a few collections a second
        if phase == "start":
            self._gc_start, self._gc_cpu = now, cpu
            return
        if self._gc_start is None:
            return
        start, self._gc_start = self._gc_start, None
        generation = int(info.get("generation", 0))
        self.gc_by_gen.setdefault(generation, _Tally()).add(now - start, cpu - self._gc_cpu)
        if threading.get_ident() != self._loop_thread:
            self.gc_off_loop += 1
        if now - start >= 0.0005:  # only what can matter to a stall is kept to explain one
            self._recent.append(_Span(start, now, f"gc gen{generation}"))

    def _wrap_callbacks(self) -> None:
        original = events.Handle._run
        monitor, loop = self, self.loop

        def timed_run(handle: events.Handle) -> None:
            if handle._loop is not loop:  # type: ignore[attr-defined]
                original(handle)
                return
            start = time.perf_counter()
            original(handle)
            took = time.perf_counter() - start
            if took >= monitor.stall_s:
                monitor._slow(handle, start, start + took)

        self._original_run = original
        events.Handle._run = timed_run  # type: ignore[method-assign,assignment]

    def _slow(self, handle: events.Handle, start: float, end: float) -> None:
        name = callback_name(handle)
        self.slow.setdefault(name, _Tally()).add(end - start)
        self._recent.append(_Span(start, end, f"callback {name}"))

    def _forget(self, before: float) -> None:
        if self._recent and self._recent[0].end < before:
            self._recent = [s for s in self._recent if s.end >= before]

    def _record(self, start: float, end: float, late: float, cpu: float) -> None:
        gc_s = sum(overlap(s, start, end) for s in self._recent if s.name.startswith("gc "))
        gens = [s.name for s in self._recent if s.name.startswith("gc ") and overlap(s, start, end)]
        callbacks = [s for s in self._recent if s.name.startswith("callback ")]
        top = max(callbacks, key=lambda s: overlap(s, start, end), default=None)
        top_s = overlap(top, start, end) if top is not None else 0.0
        if gc_s >= late / 2:
            cause = max(gens)
        elif top is not None and top_s >= late / 2:
            cause = top.name
        elif cpu >= late / 2:  # the loop ran, but no one callback as long as a stall
            cause = "busy: short callbacks"
        else:
            cause = "waiting: GIL or CPU"
        self.stalls.append(
            _Stall(
                at_s=start - self.started,
                late_ms=late * 1000,
                cause=cause,
                gc_ms=gc_s * 1000,
                callback=top.name if top is not None and top_s > 0 else "",
                callback_ms=top_s * 1000,
                loop_cpu_ms=cpu * 1000,
            )
        )

    # -------------------------------------------------------------- the report
    def report(self) -> dict[str, Any]:
        histogram = {bucket(b): 0 for b in BUCKETS_MS}
        causes: dict[str, _Tally] = {}
        cpu: dict[str, float] = {}
        for stall in self.stalls:
            histogram[bucket(stall.late_ms)] += 1
            causes.setdefault(stall.cause, _Tally()).add(stall.late_ms / 1000)
            cpu[stall.cause] = cpu.get(stall.cause, 0.0) + stall.loop_cpu_ms
        worst = sorted(self.stalls, key=lambda s: s.late_ms, reverse=True)[:_WORST]
        return {
            "seconds": round((self.stopped or time.perf_counter()) - self.started, 2),
            "tick_ms": self.tick_s * 1000,
            "stall_ms": self.stall_s * 1000,
            "ticks": self.ticks,
            "stalls": len(self.stalls),
            "stalled_ms": round(sum(s.late_ms for s in self.stalls), 1),
            "histogram": histogram,
            "causes": [{**c, "loop_cpu_ms": round(cpu[c["name"]], 1)} for c in _ranked(causes)],
            "gc": {
                "by_generation": {f"gen{g}": t.report() for g, t in sorted(self.gc_by_gen.items())},
                "off_loop": self.gc_off_loop,
                "threshold": list(gc.get_threshold()),
                "frozen": gc.get_freeze_count(),
                "tracked": sum(len(gc.get_objects(g)) for g in range(3)),  # not frozen
            },
            "slow_callbacks": _ranked(self.slow)[:20],
            "worst": [s.report() for s in worst],
        }


def _ranked(tallies: dict[str, _Tally]) -> list[dict[str, Any]]:
    ranked = sorted(tallies.items(), key=lambda kv: kv[1].total_s, reverse=True)
    return [{"name": name, **tally.report()} for name, tally in ranked]


def from_env(loop: asyncio.AbstractEventLoop) -> tuple[StallMonitor, Path] | None:
    """The monitor, started, and where its report goes, when ``BONSAI_STALLS`` asks."""
    raw = os.environ.get(ENV, "").strip()
    if not raw:
        return None
    monitor = StallMonitor(loop)
    monitor.start()
    with contextlib.suppress(NotImplementedError, AttributeError):  # no signals: no reset
        loop.add_signal_handler(signal.SIGUSR1, monitor.reset)
    return monitor, Path(raw)
