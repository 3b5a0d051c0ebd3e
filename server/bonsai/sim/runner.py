"""Ways to run the simulator: inside a running event loop, or on its own thread."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TypeVar

from bonsai.sim.script import Script
from bonsai.sim.server import Simulator
from bonsai.sim.sim_state import RecordedRequest

T = TypeVar("T")


@asynccontextmanager
async def run_simulator(
    script: Script | None = None, *, port: int = 0, host: str = "127.0.0.1", keep_alive: bool = True
) -> AsyncIterator[Simulator]:
    """``async with run_simulator(script=...) as sim:`` then use ``sim.base_url``."""
    sim = Simulator(script, host=host, port=port, keep_alive=keep_alive)
    await sim.start()
    try:
        yield sim
    finally:
        await sim.stop()


class SimulatorThread:
    """The simulator on a background thread with its own loop, for sync code.

    ``with SimulatorThread(script) as sim: ...`` or ``start()``/``stop()``.
    """

    def __init__(self, script: Script | None = None, *, port: int = 0, host: str = "127.0.0.1"):
        self._sim = Simulator(script, host=host, port=port)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._error: BaseException | None = None

    def start(self, timeout_s: float = 10.0) -> SimulatorThread:
        self._thread = threading.Thread(target=self._run, name="bonsai-sim", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout_s):
            raise TimeoutError("simulator thread did not start in time")
        if self._error is not None:
            raise RuntimeError(f"simulator failed to start: {self._error}") from self._error
        return self

    def stop(self, timeout_s: float = 10.0) -> None:
        if self._loop is not None and self._stop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(timeout_s)

    def __enter__(self) -> SimulatorThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        return self._sim.base_url

    @property
    def openai_base_url(self) -> str:
        return self._sim.openai_base_url

    @property
    def port(self) -> int:
        return self._sim.port

    @property
    def requests(self) -> list[RecordedRequest]:
        return self._call(lambda: self._sim.requests)

    def set_script(self, script: Script) -> None:
        self._call(lambda: self._sim.set_script(script))

    def reset(self) -> None:
        self._call(self._sim.reset)

    def _call(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the simulator's loop, so state is only touched there."""
        if self._loop is None:
            raise RuntimeError("simulator thread is not running")

        async def call() -> T:
            return fn()

        return asyncio.run_coroutine_threadsafe(call(), self._loop).result(timeout=10)

    def _run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        try:
            await self._sim.start()
        except BaseException as exc:
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            await self._sim.stop()
