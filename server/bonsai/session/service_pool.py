"""A bounded keeper of per-workspace services (memory stores, repository maps).

Each workspace string a client names costs a service with watcher threads,
inotify instances and an index connection. The pool keeps at most
``max_live`` of one kind alive: when one more arrives, the least recently used
service nobody holds is released; a service unused for ``idle_s`` is released
by a periodic sweep. A holder takes a *lease* (a running turn, a build, a map
being rendered off the loop); a leased service is never released, and once its
last lease ends it becomes an ordinary candidate again. Two requests for the
same key while it is being built share that one build.

A released service is closed off the event loop (its watcher threads are
joined); a later request simply builds it again, warm from its on-disk caches.
All bookkeeping runs on the event loop, so no lock is needed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

log = logging.getLogger("bonsai.pool")
S = TypeVar("S")
# the sweep runs every idle_s / SWEEPS_PER_IDLE, clamped to these bounds (seconds)
SWEEPS_PER_IDLE = 4
MIN_SWEEP_S = 0.05
MAX_SWEEP_S = 60.0
_NO_KEY = object()  # None is a key (memory without a workspace)


@dataclass(frozen=True)
class PoolLimits:
    max_live: int
    idle_s: float


@dataclass
class _Entry(Generic[S]):
    service: S
    last_used: float
    leases: int = 0


@dataclass
class _Pending(Generic[S]):
    task: asyncio.Task[S]
    waiters: int = 0


class ServicePool(Generic[S]):
    """At most ``limits().max_live`` live services of one kind, keyed by workspace."""

    def __init__(
        self,
        kind: str,
        limits: Callable[[], PoolLimits],
        close: Callable[[S], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.kind = kind
        self._limits = limits  # read on every decision: settings reload apply at once
        self._close = close  # blocking (joins threads): always run off the loop
        self._clock = clock
        self._entries: OrderedDict[Hashable, _Entry[S]] = OrderedDict()  # oldest use first
        self._pending: dict[Hashable, _Pending[S]] = {}
        self._closing: set[asyncio.Task[None]] = set()
        self._sweeper: asyncio.TimerHandle | None = None
        self._closed = False
        self.built = 0  # services built by lease() (figures for logs and tests)
        self.released = 0

    # ------------------------------------------------------------ reading
    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._entries

    def is_live(self, key: Hashable, service: S) -> bool:
        """True while ``service`` is the pool's live service for ``key``."""
        entry = self._entries.get(key)
        return entry is not None and entry.service is service

    def leases(self, key: Hashable) -> int:
        entry = self._entries.get(key)
        return entry.leases if entry is not None else 0

    # ------------------------------------------------------------ getting
    def get(self, key: Hashable, create: Callable[[], S]) -> S:
        """The live service for ``key`` (created now if needed), without a lease:
        for use within one synchronous stretch on the loop."""
        entry = self._touch(key)
        if entry is None:
            entry = self._add(key, create(), leases=0)
        return entry.service

    @contextlib.contextmanager
    def hold(self, key: Hashable, create: Callable[[], S]) -> Iterator[S]:
        """The service for ``key`` under a lease, created synchronously if needed."""
        entry = self._touch(key)
        if entry is None:
            entry = self._add(key, create(), leases=1)
        else:
            entry.leases += 1
        try:
            yield entry.service
        finally:
            self._release(key, entry.service)

    @contextlib.asynccontextmanager
    async def lease(self, key: Hashable, build: Callable[[], Awaitable[S]]) -> AsyncIterator[S]:
        """The service for ``key`` under a lease; concurrent first requests share one build."""
        service = await self._acquire(key, build)
        try:
            yield service
        finally:
            self._release(key, service)

    async def _acquire(self, key: Hashable, build: Callable[[], Awaitable[S]]) -> S:
        entry = self._touch(key)
        if entry is not None:
            entry.leases += 1
            return entry.service
        pending = self._pending.get(key)
        if pending is None:
            task = asyncio.ensure_future(self._build(key, build))
            pending = self._pending[key] = _Pending(task)
        pending.waiters += 1  # the build hands each waiter one lease
        try:
            return await asyncio.shield(pending.task)
        except asyncio.CancelledError:
            task = pending.task
            if task.done() and not task.cancelled() and task.exception() is None:
                self._release(key, task.result())  # our lease was already taken
            else:
                pending.waiters -= 1
            raise

    async def _build(self, key: Hashable, build: Callable[[], Awaitable[S]]) -> S:
        # finish releasing first: what a released service held (watches, file
        # handles) is given back before a new one takes its own
        if self._closing:
            await asyncio.gather(*list(self._closing), return_exceptions=True)
        try:
            service = await build()
        finally:
            pending = self._pending.pop(key)
        self.built += 1
        self._add(key, service, leases=pending.waiters)
        return service

    # ------------------------------------------------------------ bookkeeping
    def _touch(self, key: Hashable) -> _Entry[S] | None:
        entry = self._entries.get(key)
        if entry is not None:
            entry.last_used = self._clock()
            self._entries.move_to_end(key)
        return entry

    def _add(self, key: Hashable, service: S, leases: int) -> _Entry[S]:
        if self._closed:  # built while the daemon stopped: nobody will release it later
            self._schedule_close(key, service, "the daemon is stopping")
            return _Entry(service, self._clock(), leases)
        if key in self._entries:
            self._evict(key, "replaced")
        entry = self._entries[key] = _Entry(service, self._clock(), leases)
        self._shrink(keep=key)  # the newcomer is about to be used
        self._arm_sweep()
        return entry

    def _release(self, key: Hashable, service: S) -> None:
        entry = self._entries.get(key)
        if entry is None or entry.service is not service:
            return  # released already (daemon stopping)
        entry.leases -= 1
        entry.last_used = self._clock()
        if entry.leases == 0:
            self._shrink()

    def _shrink(self, keep: object = _NO_KEY) -> None:
        """Release least recently used unleased services until within the limit
        (over it only while every other service is leased)."""
        limit = max(1, self._limits().max_live)
        if len(self._entries) <= limit:
            return
        for key in [k for k, e in self._entries.items() if e.leases == 0 and k != keep]:
            if len(self._entries) <= limit:
                break
            self._evict(key, f"more than {limit} live")

    def sweep(self) -> int:
        """Release services idle longer than the limit; the number released."""
        idle_s = self._limits().idle_s
        now = self._clock()
        stale = [
            k for k, e in self._entries.items() if e.leases == 0 and now - e.last_used >= idle_s
        ]
        for key in stale:
            self._evict(key, f"idle for {idle_s:g} s")
        self._shrink()
        return len(stale)

    def _arm_sweep(self) -> None:
        if self._sweeper is not None or not self._entries or self._closed:
            return
        idle_s = self._limits().idle_s
        every = min(MAX_SWEEP_S, max(MIN_SWEEP_S, idle_s / SWEEPS_PER_IDLE))
        self._sweeper = asyncio.get_running_loop().call_later(every, self._on_sweep)

    def _on_sweep(self) -> None:
        self._sweeper = None
        try:
            self.sweep()
        except Exception:  # a sweep must never take the daemon down
            log.exception("%s pool sweep failed", self.kind)
        self._arm_sweep()

    def _evict(self, key: Hashable, why: str) -> None:
        entry = self._entries.pop(key)
        self._schedule_close(key, entry.service, why)

    def _schedule_close(self, key: Hashable, service: S, why: str) -> None:
        self.released += 1
        log.info("releasing %s service for %s (%s)", self.kind, key, why)
        task = asyncio.ensure_future(self._close_off_loop(key, service))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def _close_off_loop(self, key: Hashable, service: S) -> None:
        try:
            await asyncio.to_thread(self._close, service)
        except Exception:
            log.exception("closing the %s service for %s failed", self.kind, key)

    # ------------------------------------------------------------ stopping
    async def close_all(self) -> None:
        """Daemon shutdown: release every service, leased or not, and wait for it."""
        self._closed = True
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
        for key in list(self._entries):
            self._evict(key, "the daemon is stopping")
        if self._closing:
            await asyncio.wait(list(self._closing))
