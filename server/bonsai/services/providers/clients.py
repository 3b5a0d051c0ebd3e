"""The provider clients a daemon keeps: one ``httpx.AsyncClient`` per shape, shared.

A turn used to make its own client and close it at its end, so every turn opened a
new connection (a real provider's TCP and TLS handshake, ~19% of a turn's loop time
against a local server). Here every turn and session whose settings give the same
*shape* (base URL, key, CA setting, timeouts) leases the same client and its
connection pool (keep-alive). A lease for a new shape on a base URL retires the
client that had the old one (a changed key, timeout or CA bundle gets a new client);
a retired client is closed once its last lease ends. The daemon closes them all at
its stop.

A connection the server closed while idle is dropped by httpcore before reuse (it is
readable); one it closes just as a request goes out is reopened once by the transport
(``transport.py``: nothing was received, so nothing is repeated). A cancelled
request's connection is closed, never returned to the pool half-read.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from bonsai.services.providers.aio_backend import AsyncioTransport

log = logging.getLogger("bonsai.providers")

SHAPES_KEPT = 8  # clients of base URLs no longer used are closed beyond this


@dataclass(frozen=True)
class ClientShape:
    """What shapes a client: two turns with the same shape share one."""

    base_url: str
    key_digest: str  # a digest of the key, never the key itself
    cert_file: str | None
    cert_dir: str | None
    connect_timeout_s: float
    read_timeout_s: float


def key_digest(key: str | None) -> str:
    return "" if not key else hashlib.sha256(key.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class HttpClient:
    """A client and the transport its requests go through (ours, or a test's)."""

    client: httpx.AsyncClient
    transport: httpx.AsyncBaseTransport

    def has_idle(self, url: str) -> bool:
        """Whether a request to ``url`` now would likely reuse a kept connection."""
        own = self.transport
        return isinstance(own, AsyncioTransport) and own.has_idle(url)


@dataclass
class _Entry:
    client: HttpClient
    leases: int = 0
    retired: bool = False


@dataclass
class ClientPool:
    """Shape → its shared client; a client is leased by a provider and released by it."""

    limit: int = SHAPES_KEPT
    _entries: dict[ClientShape, _Entry] = field(default_factory=dict)
    _by_url: dict[str, ClientShape] = field(default_factory=dict)  # the newest shape per URL
    made: int = 0  # clients built (tests and benches)
    _closed: bool = False

    def lease(self, shape: ClientShape, build: Callable[[], HttpClient]) -> HttpClient:
        """The client for ``shape`` (built on first use); the caller ``release``\\ s it."""
        entry = self._entries.get(shape)
        if entry is None or entry.retired or entry.client.client.is_closed or self._closed:
            entry = _Entry(build())
            self.made += 1
            if self._closed:  # after the stop: a client of its own, closed at its release
                entry.retired = True
            else:
                self._entries[shape] = entry
        old = self._by_url.get(shape.base_url)
        if old is not None and old != shape:
            self._retire(old)
        if not self._closed:
            self._by_url.pop(shape.base_url, None)  # the most recent last
            self._by_url[shape.base_url] = shape
        entry.leases += 1
        self._trim()
        return entry.client

    async def release(self, client: HttpClient) -> None:
        """A lease ends; a retired client with no lease left is closed."""
        for shape, entry in list(self._entries.items()):
            if entry.client is client:
                entry.leases -= 1
                if entry.retired and entry.leases <= 0:
                    del self._entries[shape]
                    await client.client.aclose()
                return
        await client.client.aclose()  # one made after the stop, or already retired and dropped

    def clients(self) -> int:
        """Clients open now (tests)."""
        return sum(1 for entry in self._entries.values() if not entry.client.client.is_closed)

    async def aclose(self) -> None:
        """Close every client (the daemon's stop); a lease taken later gets its own."""
        self._closed = True
        entries, self._entries = list(self._entries.values()), {}
        self._by_url.clear()
        for entry in entries:
            try:
                await entry.client.client.aclose()
            except Exception:  # a client failing to close must not stop the others
                log.warning("a provider client did not close cleanly", exc_info=True)

    def _retire(self, shape: ClientShape) -> None:
        entry = self._entries.get(shape)
        if entry is None:
            return
        entry.retired = True
        if entry.leases <= 0:
            del self._entries[shape]
            _close_later(entry.client.client)

    def _trim(self) -> None:
        """Beyond ``limit`` shapes, the least recent unleased base URLs' clients go."""
        while len(self._by_url) > self.limit:
            url = next(iter(self._by_url))
            self._retire(self._by_url.pop(url))


def _close_later(client: httpx.AsyncClient) -> None:
    try:
        task = asyncio.get_running_loop().create_task(client.aclose())
    except RuntimeError:  # no loop: nothing was ever opened on it from here
        return
    _closing.add(task)
    task.add_done_callback(_closing.discard)


_closing: set[asyncio.Task[None]] = set()  # held until done (a task is weakly kept)
