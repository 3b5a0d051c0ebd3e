"""Memory per workspace for the daemon: the service, hand-edit sync, per-turn recall."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

from bonsai.daemon.state import Daemon
from bonsai.services.memory.inject import InjectionState
from bonsai.services.memory.service import MemoryService
from bonsai.services.memory.watch import MemoryWatcher

CountTokens = Callable[[str], int]

log = logging.getLogger("bonsai.memory")
INJECTED_KEY = "memory_injected"


def memory_service(daemon: Daemon, workspace: str | None) -> MemoryService:
    services: dict[str | None, MemoryService] = daemon.services.setdefault("memory", {})
    service = services.get(workspace)
    if service is None:
        settings = daemon.settings(workspace).settings.memory
        ws = Path(workspace) if workspace else None
        service = services[workspace] = MemoryService(daemon.home, ws, settings)
        # resync on the event loop, where recall also syncs: never two writers at once
        loop = asyncio.get_running_loop()

        def changed(_: Path) -> None:
            loop.call_soon_threadsafe(_resync, service)

        watcher = service.watch(changed)
        daemon.services.setdefault("shutdown_hooks", []).append(_stopper(watcher, service))
    return service


def _resync(service: MemoryService) -> None:
    """A file was edited by hand: refresh the retrieval shadow now."""
    try:
        service.sync()
    except Exception:  # a broken hand edit is reported by list/status, never fatal here
        log.exception("memory sync after a hand edit failed")


def _stopper(watcher: MemoryWatcher, service: MemoryService) -> Callable[[], Awaitable[None]]:
    async def stop() -> None:
        watcher.stop()
        service.close()

    return stop


def recall_note(
    daemon: Daemon, session_id: str, workspace: str, user_text: str, count_tokens: CountTokens
) -> str | None:
    """The background-data note for this user turn, each entry once per conversation."""
    service = memory_service(daemon, workspace)
    state = InjectionState.model_validate(daemon.store.get_state(session_id, INJECTED_KEY, {}))
    injection = service.recall_for_turn(user_text, state, count_tokens)
    if injection.text:
        daemon.store.set_state(session_id, INJECTED_KEY, injection.state.model_dump(mode="json"))
    return injection.text
