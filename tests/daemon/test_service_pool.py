"""The keeper of per-workspace services: bounded, LRU, idle expiry, leases, one build per key.

Each pooled "service" here owns a real thread (like a file watcher does), so
"released" means its thread was stopped and joined, observable by the test.
"""

from __future__ import annotations

import asyncio
import threading

import pytest

from bonsai.session.service_pool import PoolLimits, ServicePool


class Watcher:
    """A stand-in for a workspace service: one live thread until closed."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._stop.wait, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self._stop.set()
        self.thread.join(5)

    @property
    def alive(self) -> bool:
        return self.thread.is_alive()


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make_pool(max_live: int = 2, idle_s: float = 60.0, clock: Clock | None = None) -> ServicePool:
    limits = PoolLimits(max_live, idle_s)
    return ServicePool("test", lambda: limits, Watcher.close, clock or Clock())


async def settle(pool: ServicePool) -> None:
    """Wait for released services to finish closing (closing runs off the loop)."""
    for _ in range(200):
        await asyncio.sleep(0.01)
        if not pool._closing:
            return


async def test_the_least_recently_used_service_is_released_first() -> None:
    pool = make_pool(max_live=2)
    a = pool.get("a", lambda: Watcher("a"))
    b = pool.get("b", lambda: Watcher("b"))
    assert pool.get("a", lambda: Watcher("a2")) is a, "a live service is reused"
    c = pool.get("c", lambda: Watcher("c"))
    await settle(pool)
    assert not b.alive, "b was used least recently"
    assert a.alive and c.alive
    assert len(pool) == 2 and "b" not in pool
    again = pool.get("b", lambda: Watcher("b2"))
    assert again is not b and again.alive, "a released service is simply made again"


async def test_a_leased_service_is_never_released_and_goes_when_its_lease_ends() -> None:
    pool = make_pool(max_live=1)
    with pool.hold("busy", lambda: Watcher("busy")) as busy:
        other = pool.get("other", lambda: Watcher("other"))
        third = pool.get("third", lambda: Watcher("third"))
        await settle(pool)
        assert busy.alive, "held by a running turn"
        assert not other.alive and third.alive
    await settle(pool)
    assert not busy.alive, "over the limit once the lease ended: released"
    assert third.alive and len(pool) == 1


async def test_an_idle_service_is_released_by_the_sweep() -> None:
    clock = Clock()
    pool = make_pool(max_live=8, idle_s=60.0, clock=clock)
    old = pool.get("old", lambda: Watcher("old"))
    clock.now += 45
    fresh = pool.get("fresh", lambda: Watcher("fresh"))
    with pool.hold("held", lambda: Watcher("held")) as held:
        clock.now += 30
        assert pool.sweep() == 1
        await settle(pool)
        assert not old.alive, "unused for 75 s > 60 s"
        assert fresh.alive, "used 30 s ago"
        clock.now += 120
        assert pool.sweep() == 1, "the held one stays"
        assert held.alive
    await settle(pool)
    assert not fresh.alive


async def test_the_periodic_sweep_runs_by_itself() -> None:
    limits = PoolLimits(8, 0.2)
    pool: ServicePool[Watcher] = ServicePool("test", lambda: limits, Watcher.close)
    service = pool.get("ws", lambda: Watcher("ws"))
    for _ in range(100):
        await asyncio.sleep(0.05)
        if not service.alive:
            break
    assert not service.alive and len(pool) == 0


async def test_concurrent_first_requests_share_one_build() -> None:
    pool = make_pool()
    started = 0
    gate = asyncio.Event()

    async def build() -> Watcher:
        nonlocal started
        started += 1
        await gate.wait()
        return Watcher("ws")

    async def use() -> Watcher:
        async with pool.lease("ws", build) as service:
            await asyncio.sleep(0.01)
            return service

    first = asyncio.ensure_future(use())
    second = asyncio.ensure_future(use())
    await asyncio.sleep(0.05)
    gate.set()
    one, two = await asyncio.gather(first, second)
    assert one is two and started == 1 and pool.built == 1
    assert pool.leases("ws") == 0, "both leases were given back"


async def test_a_cancelled_waiter_does_not_cancel_the_build_for_the_others() -> None:
    pool = make_pool()
    gate = asyncio.Event()

    async def build() -> Watcher:
        await gate.wait()
        return Watcher("ws")

    async def use() -> Watcher:
        async with pool.lease("ws", build) as service:
            return service

    leaving = asyncio.ensure_future(use())
    staying = asyncio.ensure_future(use())
    await asyncio.sleep(0.02)
    leaving.cancel()
    gate.set()
    service = await staying
    with pytest.raises(asyncio.CancelledError):
        await leaving
    assert service.alive and pool.leases("ws") == 0 and pool.built == 1


async def test_a_failed_build_fails_every_waiter_and_the_next_request_retries() -> None:
    pool = make_pool()
    attempts = 0

    async def build() -> Watcher:
        nonlocal attempts
        attempts += 1
        await asyncio.sleep(0.02)
        if attempts == 1:
            raise NotADirectoryError("not a directory: ws")
        return Watcher("ws")

    async def use() -> Watcher:
        async with pool.lease("ws", build) as service:
            return service

    results = await asyncio.gather(use(), use(), return_exceptions=True)
    assert all(isinstance(r, NotADirectoryError) for r in results) and attempts == 1
    assert (await use()).alive and attempts == 2


async def test_close_all_releases_everything_even_held_services() -> None:
    pool = make_pool(max_live=4)
    idle = pool.get("idle", lambda: Watcher("idle"))
    with pool.hold("held", lambda: Watcher("held")) as held:
        await pool.close_all()
        assert not idle.alive and not held.alive and len(pool) == 0
    late = pool.get("late", lambda: Watcher("late"))
    await settle(pool)
    assert not late.alive, "made while stopping: closed at once, never kept"


async def test_a_smaller_limit_applies_without_a_restart() -> None:
    limits = {"max_live": 3}
    pool: ServicePool[Watcher] = ServicePool(
        "test", lambda: PoolLimits(limits["max_live"], 60.0), Watcher.close
    )
    services = [pool.get(name, lambda n=name: Watcher(n)) for name in "abc"]
    limits["max_live"] = 1
    pool.sweep()
    await settle(pool)
    assert [s.alive for s in services] == [False, False, True]
