"""Read-only views off the event loop.

A view (the ledger, the wire and turns views, a node's text) is computed on
one worker thread over its own database connection, inside one read
transaction: an immutable snapshot of the log, never blocking the loop that
streams turns. The view sees what was committed before the request arrived.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import apsw

from bonsai.core.context import AssemblyMemo
from bonsai.protocol.models import Wire
from bonsai.services.config import LoadedSettings
from bonsai.services.store.sessions import SessionStore
from bonsai.session.host import Host, Subscriber
from bonsai.session.hub import SessionHub
from bonsai.session.service_pool import ServicePool

T = TypeVar("T")
BUSY_TIMEOUT_MS = 5_000


class ViewMutates(RuntimeError):
    """A read-only view tried to notify clients or lease a service."""


@dataclass
class ReadHost:
    """The daemon as a view sees it: the worker's connection, a copy of the hub's
    per-session state taken on the loop, the subscribers as they were. Nothing
    can be broadcast or leased from here."""

    home: Path
    db: apsw.Connection
    store: SessionStore
    hub: SessionHub
    _settings: Callable[[str | None], LoadedSettings]
    _subscribers: dict[str, list[Subscriber]]

    def settings(self, workspace: str | None = None) -> LoadedSettings:
        return self._settings(workspace)

    def pool(self, kind: str, close: Callable[[Any], None]) -> ServicePool[Any]:
        raise ViewMutates(f"a read-only view cannot lease the {kind} service")

    def broadcast(self, session_id: str, method: str, params: Wire) -> None:
        raise ViewMutates(f"a read-only view cannot send {method}")

    def broadcast_all(self, method: str, params: Wire) -> None:
        raise ViewMutates(f"a read-only view cannot send {method}")

    def subscribers(self, session_id: str) -> Sequence[Subscriber]:
        return self._subscribers.get(session_id, [])

    def clients(self) -> Sequence[Subscriber]:
        return [c for group in self._subscribers.values() for c in group]


class ViewWorker:
    """One thread, one connection (opened there on first use), one snapshot per view."""

    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path
        self._pool: ThreadPoolExecutor | None = None
        self._local = threading.local()
        self._memos: dict[str, AssemblyMemo] = {}  # the worker's own: memos are not thread-safe

    async def run(self, host: Host, session_id: str, view: Callable[[Host], T]) -> T:
        """``view(read_host)`` on the worker; the hub state it needs is copied here, on the loop."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="bonsai-views")
        hub = SessionHub(
            memos=self._memos,
            counters=host.hub.counters,  # thread-safe caches, shared with the turns
            repomap_text=dict(host.hub.repomap_text),
        )
        subscribers = {session_id: list(host.subscribers(session_id))}
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, self._snapshot, host, hub, subscribers, view)

    def _snapshot(
        self,
        host: Host,
        hub: SessionHub,
        subscribers: dict[str, list[Subscriber]],
        view: Callable[[Host], T],
    ) -> T:
        conn = self._connection()
        read = ReadHost(host.home, conn, SessionStore(conn), hub, host.settings, subscribers)
        with conn:  # one transaction: every read of this view sees the same log
            result = view(read)
        return result

    def _connection(self) -> apsw.Connection:
        conn: apsw.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = apsw.Connection(str(self.db_path), flags=apsw.SQLITE_OPEN_READWRITE)
            conn.setbusytimeout(BUSY_TIMEOUT_MS)
            conn.execute("PRAGMA foreign_keys = ON")
            self._local.conn = conn
        return conn

    def forget(self, session_id: str) -> None:
        self._memos.pop(session_id, None)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.submit(self._close_connection).result(timeout=30)
            self._pool.shutdown(wait=True)
            self._pool = None

    def _close_connection(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
