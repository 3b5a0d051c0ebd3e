"""Memory per workspace for the daemon: the pooled service, hand-edit sync, per-turn recall.

The service is used from the event loop (recall, the memory tool, promotion, hand-edit
sync, the writing requests) and from the view worker (``bonsai/memory/list``, ``get``
and ``search``, through :func:`memory_read`): every public method of the service
holds its lock (:class:`GuardedMemory`), so its one index connection and its caches
see one caller at a time. A read holds the lock for its whole answer (one consistent
view of the stores); the loop waits for it only when a turn's recall comes in the
middle of one.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import logging
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from bonsai.services.memory.inject import InjectionState
from bonsai.services.memory.service import MemoryService
from bonsai.services.memory.watch import MemoryWatcher
from bonsai.services.workspace import workspace_key
from bonsai.session.host import Host
from bonsai.session.service_pool import ServicePool

CountTokens = Callable[[str], int]
T = TypeVar("T")

log = logging.getLogger("bonsai.memory")
INJECTED_KEY = "memory_injected"


class GuardedMemory(MemoryService):
    """A :class:`MemoryService` whose public methods each hold ``lock`` (re-entrant:
    they call one another), so the loop and the view worker can share it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.lock = threading.RLock()
        super().__init__(*args, **kwargs)


def _guarded(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def call(self: GuardedMemory, *args: Any, **kwargs: Any) -> Any:
        with self.lock:
            return method(self, *args, **kwargs)

    return call


for _name, _method in list(vars(MemoryService).items()):
    if inspect.isfunction(_method) and not _name.startswith("_"):
        setattr(GuardedMemory, _name, _guarded(_method))


@dataclass(frozen=True)
class LiveMemory:
    """A workspace's memory service with the watcher that follows hand edits."""

    service: GuardedMemory
    watcher: MemoryWatcher


def _pool(daemon: Host) -> ServicePool[LiveMemory]:
    return daemon.pool("memory", _close)


def memory_service(daemon: Host, workspace: str | None) -> MemoryService:
    """The workspace's memory service, for use within one synchronous stretch on
    the loop; code that awaits while using it takes :func:`memory_lease`."""
    workspace = None if workspace is None else workspace_key(workspace)
    return _pool(daemon).get(workspace, lambda: _open(daemon, workspace)).service


async def memory_read(
    daemon: Host,
    workspace: str | None,
    read: Callable[[MemoryService], T],
    run: Callable[[Callable[[], T]], Awaitable[T]],
) -> T:
    """``read(service)`` through ``run`` (the view worker), off the loop: the service is
    leased here, on the loop (so it is not released meanwhile), and held locked for
    the whole read."""
    with memory_lease(daemon, workspace) as service:

        def locked() -> T:
            with service.lock:
                return read(service)

        return await run(locked)


@contextlib.contextmanager
def memory_lease(daemon: Host, workspace: str | None) -> Iterator[GuardedMemory]:
    """The workspace's memory service, kept alive (never released) until the block ends."""
    workspace = None if workspace is None else workspace_key(workspace)
    with _pool(daemon).hold(workspace, lambda: _open(daemon, workspace)) as live:
        yield live.service


def _open(daemon: Host, workspace: str | None) -> LiveMemory:
    settings = daemon.settings(workspace).settings.memory
    ws = Path(workspace) if workspace else None
    service = GuardedMemory(daemon.home, ws, settings)
    # resync on the event loop, where recall also syncs: never two writers at once
    loop = asyncio.get_running_loop()
    pool = _pool(daemon)
    holder: list[LiveMemory] = []

    def changed(_: Path) -> None:
        loop.call_soon_threadsafe(_resync, pool, workspace, holder)

    try:
        live = LiveMemory(service, service.watch(changed))
    except BaseException:
        service.close()
        raise
    holder.append(live)
    return live


def _resync(pool: ServicePool[LiveMemory], workspace: str | None, holder: list[LiveMemory]) -> None:
    """A file was edited by hand: refresh the retrieval shadow now (unless released)."""
    if not holder or not pool.is_live(workspace, holder[0]):
        return
    try:
        holder[0].service.sync()
    except Exception:  # a broken hand edit is reported by list/status, never fatal here
        log.exception("memory sync after a hand edit failed")


def _close(live: LiveMemory) -> None:
    """Stop the watcher (joins its threads) and close the index connection."""
    live.watcher.stop()
    live.service.close()


def recall_note(
    daemon: Host, session_id: str, workspace: str, user_text: str, count_tokens: CountTokens
) -> str | None:
    """The background-data note for this user turn, each entry once per conversation."""
    service = memory_service(daemon, workspace)
    state = InjectionState.model_validate(daemon.store.get_state(session_id, INJECTED_KEY, {}))
    injection = service.recall_for_turn(user_text, state, count_tokens)
    if injection.text:
        daemon.store.set_state(session_id, INJECTED_KEY, injection.state.model_dump(mode="json"))
    return injection.text
