"""Shared daemon state: the store, the connected clients and who listens to what.

**Invariant:** requests name their session; there is no "current session".
A client receives a session's events only after ``bonsai/session/attach``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import apsw

from bonsai.daemon import framing
from bonsai.protocol.models import ChatCancelledParams, ChatDeltaParams, ChatErrorParams, Wire
from bonsai.services.config import (
    LoadedSettings,
    load_settings,
    project_config_path,
    user_config_path,
)
from bonsai.services.redaction import redact_text, redact_value
from bonsai.session import versions
from bonsai.session.hub import SessionHub
from bonsai.session.loop_store import LoopStore
from bonsai.session.service_pool import PoolLimits, ServicePool
from bonsai.session.view_store import MessageCache
from bonsai.session.views import ViewWorker

log = logging.getLogger("bonsai.daemon")


def event_frame(method: str, params: Wire) -> bytes:
    """An event as clients get it: redacted, dumped and framed, once for all of them.

    A streamed delta, the event sent most, takes a short way to the same bytes: its
    one field from outside (the text) is redacted, the ids and seq are the daemon's,
    and its frame is filled in around the encoded strings (``framing.delta_notification``)."""
    if type(params) is ChatDeltaParams:
        text = redact_text(params.text)
        return framing.delta_notification(
            method, params.session_id, params.turn_id, params.seq, text
        )
    return framing.notification(method, redact_value(params.dump()))


def older_shape(params: Wire) -> Wire | None:
    """What a client gets for a chat event kind added after it was written, unless its
    ``initializationOptions.chatEventKinds`` names the kind: the shape it knew, so its turn
    still ends (a kind an extension does not know is skipped, and its turn would run on)."""
    if type(params) is ChatCancelledParams:
        ids = {"session_id": params.session_id, "turn_id": params.turn_id, "seq": params.seq}
        return ChatErrorParams(**ids, message="turn cancelled")
    return None


@dataclass(frozen=True)
class EventFrames:
    """A broadcast framed once: the frame, and the older shape's frame when there is one."""

    frame: bytes
    kind: str = ""
    older: bytes | None = None

    @classmethod
    def of(cls, method: str, params: Wire) -> EventFrames:
        frame, older = event_frame(method, params), older_shape(params)
        if older is None:
            return cls(frame)
        return cls(frame, str(getattr(params, "kind", "")), event_frame(method, older))

    def for_client(self, connection: Connection) -> bytes:
        if self.older is None or self.kind in connection.chat_event_kinds:
            return self.frame
        return self.older


class Peer(Protocol):
    """The JSON-RPC peer a connection talks through (pygls' protocol, in ``rpc``)."""

    def notify(self, method: str, params: Any = None) -> None: ...
    def send_frame(self, frame: bytes) -> None: ...
    def send_request_async(
        self, method: str, params: Any = None, msg_id: Any = None
    ) -> asyncio.Future[Any]: ...


@dataclass(eq=False)
class Connection:
    """One connected client (an editor window, a CLI, a test)."""

    id: int
    kind: str
    protocol: Peer
    close: Callable[[], None]
    attached: set[str] = field(default_factory=set)
    authenticated: bool = True
    name: str = ""  # the editor, in words ("VS Code", "Neovim"), from its initialize
    # the later chat event kinds it shows (initialize's chatEventKinds): see older_shape
    chat_event_kinds: frozenset[str] = frozenset()

    def notify(self, method: str, params: Wire | dict[str, Any]) -> None:
        payload = params.dump() if isinstance(params, Wire) else params
        self.send(method, framing.notification(method, payload))

    def send(self, method: str, frame: bytes) -> None:
        """A notification already framed (a broadcast encodes it once for all clients)."""
        try:
            self.protocol.send_frame(frame)
        except Exception:  # a dead client must not break the sender
            log.warning("dropping notification %s to client %s", method, self.id)

    def notify_lsp(self, method: str, params: Any) -> None:
        """A standard LSP notification (lsprotocol params object, e.g. $/progress)."""
        try:
            self.protocol.notify(method, params)
        except Exception:
            log.warning("dropping notification %s to client %s", method, self.id)

    async def request(self, method: str, params: Wire, timeout: float) -> Any:
        future = self.protocol.send_request_async(method, params.dump())
        return await asyncio.wait_for(future, timeout)

    async def request_lsp(self, method: str, params: Any, timeout: float) -> Any:
        """A standard LSP request to this client (e.g. window/workDoneProgress/create)."""
        future = self.protocol.send_request_async(method, params)
        return await asyncio.wait_for(future, timeout)


class Daemon:
    def __init__(self, home: Path, conn: apsw.Connection, db_path: Path) -> None:
        self.home = home
        self.db = conn
        self.db_path = db_path
        self.store = LoopStore(conn, MessageCache())  # a message read again is kept, and more
        self.started_at = time.monotonic()
        self.pid = os.getpid()
        self.connections: dict[int, Connection] = {}
        self.stop_requested = asyncio.Event()
        self._next_id = 0
        self._settings_cache: dict[str | None, tuple[object, LoadedSettings]] = {}
        self.hub = SessionHub()  # what sessions keep between requests
        self.views = ViewWorker(db_path)  # read-only views, off the event loop
        versions.install(conn)  # what the views know is still true by
        # per-workspace services by kind ("memory", "repomap"), bounded and released when idle
        self.pools: dict[str, ServicePool[Any]] = {}

    # -------------------------------------------------------------- clients
    def add_connection(self, kind: str, protocol: Peer, close: Callable[[], None]) -> Connection:
        self._next_id += 1
        connection = Connection(self._next_id, kind, protocol, close)
        self.connections[connection.id] = connection
        log.info("client %s connected over %s", connection.id, kind)
        return connection

    def remove_connection(self, connection: Connection) -> None:
        self.connections.pop(connection.id, None)
        connection.attached.clear()
        log.info("client %s disconnected", connection.id)

    def subscribers(self, session_id: str) -> list[Connection]:
        return [c for c in self.connections.values() if session_id in c.attached]

    def clients(self) -> list[Connection]:
        return list(self.connections.values())

    def broadcast(self, session_id: str, method: str, params: Wire) -> None:
        # the one way events reach clients: redacted, dumped and encoded once, for all of them
        frames = EventFrames.of(method, params)
        for connection in self.subscribers(session_id):
            connection.send(method, frames.for_client(connection))

    def broadcast_all(self, method: str, params: Wire) -> None:
        frames = EventFrames.of(method, params)
        for connection in list(self.connections.values()):
            connection.send(method, frames.for_client(connection))

    # -------------------------------------------------------------- settings
    def settings(self, workspace: str | None = None) -> LoadedSettings:
        """The settings for ``workspace``, read again when a config file it reads
        changed (the watcher's reload may not have run yet: an edit then a command);
        within :func:`settings_read_once`, once for the span."""
        span = _READ_ONCE.get()
        if span is None or not span.open:
            return self._settings_now(workspace)
        loaded = span.settings.get(workspace)
        if loaded is None:
            loaded = span.settings[workspace] = self._settings_now(workspace)
        return loaded

    def _settings_now(self, workspace: str | None) -> LoadedSettings:
        files = [user_config_path(self.home)]
        if workspace:
            files.append(project_config_path(Path(workspace)))
        key = tuple(_identity_in_span(path) for path in files)
        cached = self._settings_cache.get(workspace)
        if cached is None or cached[0] != key:
            loaded = load_settings(self.home, Path(workspace) if workspace else None)
            cached = self._settings_cache[workspace] = (key, loaded)
        return cached[1]

    def pool_limits(self) -> PoolLimits:
        """The workspace-service limits now (user-level settings: the pools are daemon-wide)."""
        daemon = self.settings().settings.daemon
        return PoolLimits(daemon.max_workspace_services, daemon.service_idle_s)

    def pool(self, kind: str, close: Callable[[Any], None]) -> ServicePool[Any]:
        """The pool of one kind of per-workspace service, made on first use."""
        pool = self.pools.get(kind)
        if pool is None:
            pool = self.pools[kind] = ServicePool(kind, self.pool_limits, close)
        return pool

    def reload_settings(self) -> list[str]:
        self._settings_cache.clear()
        return self.settings().problems

    def uptime(self) -> float:
        return time.monotonic() - self.started_at


@dataclass
class _ReadOnce:
    open: bool = True
    settings: dict[str | None, LoadedSettings] = field(default_factory=dict)
    kept: dict[Path, tuple[int, int, int, int] | None] = field(default_factory=dict)


_READ_ONCE: ContextVar[_ReadOnce | None] = ContextVar("bonsai_settings_read_once", default=None)


@contextlib.contextmanager
def settings_read_once() -> Iterator[None]:
    """Within this synchronous span (one poll answered from its read callback: nothing
    else runs on the loop meanwhile), :meth:`Daemon.settings` answers each workspace
    once and checks each config file once (its ``stat`` identity kept for the span): a
    poll asked for the settings at three layers (the server's facts, the kept-answer
    stamp, what the view process is sent), two ``stat`` calls each time. A context
    copied inside the span (a callback for later) does not keep it: the span is closed
    at its end."""
    span = _ReadOnce()
    token = _READ_ONCE.set(span)
    try:
        yield
    finally:
        span.open = False
        _READ_ONCE.reset(token)


def _identity_in_span(path: Path) -> tuple[int, int, int, int] | None:
    span = _READ_ONCE.get()
    if span is None or not span.open:
        return _file_identity(path)
    if path not in span.kept:
        span.kept[path] = _file_identity(path)
    return span.kept[path]


def _file_identity(path: Path) -> tuple[int, int, int, int] | None:
    """A config file's stat identity (None: absent or unreadable)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
