"""httpcore's network layer on plain asyncio: what a streamed reply costs per chunk.

httpx reads through anyio, which pauses the socket after every chunk it receives and
resumes it at the next read (two ``epoll_ctl`` calls), and enters a cancel scope and
looks up the async library for every read: most of the daemon's CPU per streamed
token. This backend gives httpcore the same ``AsyncNetworkStream`` over an asyncio
protocol that keeps what arrives until httpcore reads it: one callback per network
read, a read that finds data returns it at once, all of it. Errors are httpcore's
(``ConnectError``, ``ReadTimeout``, …), which httpx maps to its own as before.

Only the client's own connections use it (``transport.py``); a proxy's keep httpx's.
"""

from __future__ import annotations

import asyncio
import math
import socket
import ssl
from collections import deque
from collections.abc import Iterable
from typing import Any

import httpcore
import httpx
from httpcore import (
    AsyncNetworkBackend,
    AsyncNetworkStream,
    ConnectError,
    ConnectTimeout,
    ReadError,
    ReadTimeout,
    WriteError,
    WriteTimeout,
)

# an idle kept connection is closed after this long (a server that closes it sooner is
# noticed: its connection turns readable, or a request on it is sent again once)
KEEPALIVE_S = 60.0
# a reply read no further while this much waits (the socket is paused until it is)
HIGH_WATER = 1 << 20

SocketOption = (
    tuple[int, int, int] | tuple[int, int, bytes | bytearray] | tuple[int, int, None, int]
)


class _Inbox(asyncio.Protocol):
    """What the connection received and httpcore has not read yet."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.chunks: deque[bytes] = deque()
        self.buffered = 0
        self.eof = False
        self.error: BaseException | None = None
        self.waiter: asyncio.Future[None] | None = None
        self.paused = False
        self.write_ready: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.chunks.append(data)
        self.buffered += len(data)
        if self.buffered > HIGH_WATER and self.transport is not None:
            self.transport.pause_reading()
            self.paused = True
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False  # the transport closes itself

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self.error = exc
        self._wake()
        if self.write_ready is not None and not self.write_ready.done():
            self.write_ready.set_result(None)

    def pause_writing(self) -> None:
        self.write_ready = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self.write_ready is not None and not self.write_ready.done():
            self.write_ready.set_result(None)
        self.write_ready = None

    def _wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    def take(self, max_bytes: int) -> bytes:
        data = self.chunks.popleft() if len(self.chunks) == 1 else b"".join(self.chunks)
        self.chunks.clear()
        if len(data) > max_bytes:
            self.chunks.append(data[max_bytes:])
            data = data[:max_bytes]
        self.buffered -= len(data)
        if self.paused and self.buffered <= HIGH_WATER // 2 and self.transport is not None:
            self.transport.resume_reading()
            self.paused = False
        return data


def _expire(waiter: asyncio.Future[None], error: type[Exception]) -> None:
    if not waiter.done():
        waiter.set_exception(error())


async def _wait(
    future: asyncio.Future[None], timeout: float | None, error: type[Exception]
) -> None:
    if timeout is None:
        await future
        return
    timer = asyncio.get_running_loop().call_later(timeout, _expire, future, error)
    try:
        await future
    finally:
        timer.cancel()


class AsyncioStream(AsyncNetworkStream):
    def __init__(self, transport: asyncio.Transport, inbox: _Inbox) -> None:
        self._transport = transport
        self._inbox = inbox
        # the read timeout: one timer for many reads (not one made and cancelled per read);
        # each waiting read still fails ``timeout`` seconds after it began, not later
        self._deadline = 0.0
        self._timer: asyncio.TimerHandle | None = None

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        inbox = self._inbox
        if not inbox.chunks and not inbox.eof:
            loop = asyncio.get_running_loop()
            inbox.waiter = loop.create_future()
            self._deadline = math.inf if timeout is None else loop.time() + timeout
            if self._timer is None or self._deadline < self._timer.when():
                self._arm(loop)
            try:
                await inbox.waiter
            finally:
                inbox.waiter = None
        if inbox.chunks:
            return inbox.take(max_bytes)
        if inbox.error is not None:
            raise ReadError(str(inbox.error) or type(inbox.error).__name__)
        return b""

    def _arm(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._timer is not None:
            self._timer.cancel()
        live = self._deadline != math.inf
        self._timer = loop.call_at(self._deadline, self._check_deadline) if live else None

    def _check_deadline(self) -> None:
        """The timer is due: fail the waiting read past its deadline; a read begun since
        it was set waits on for the rest of its own time; with no read waiting, stop."""
        self._timer = None
        waiter = self._inbox.waiter
        if waiter is None or waiter.done():
            return
        loop = asyncio.get_running_loop()
        if loop.time() >= self._deadline:
            waiter.set_exception(ReadTimeout())
        else:
            self._arm(loop)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        if self._transport.is_closing():
            raise WriteError("the connection is closed")
        try:
            self._transport.write(buffer)
        except (OSError, RuntimeError) as error:
            raise WriteError(str(error)) from None
        ready = self._inbox.write_ready
        if ready is not None:
            await _wait(ready, timeout, WriteTimeout)
        if self._inbox.error is not None:
            raise WriteError(str(self._inbox.error))

    async def aclose(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._transport.close()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            transport = await asyncio.wait_for(
                loop.start_tls(
                    self._transport, self._inbox, ssl_context, server_hostname=server_hostname
                ),
                timeout,
            )
        except TimeoutError:
            self._transport.abort()
            raise ConnectTimeout("the TLS handshake timed out") from None
        except (OSError, ssl.SSLError, ConnectionError) as error:
            self._transport.abort()
            raise ConnectError(str(error)) from None
        if transport is None:
            raise ConnectError("the connection closed during the TLS handshake")
        assert isinstance(transport, asyncio.Transport)
        self._inbox.transport = transport
        return AsyncioStream(transport, self._inbox)

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":  # an idle connection the server closed (or wrote to)
            return bool(self._inbox.chunks) or self._inbox.eof
        if info == "client_addr":
            return self._transport.get_extra_info("sockname")
        if info == "server_addr":
            return self._transport.get_extra_info("peername")
        if info in ("ssl_object", "socket"):
            return self._transport.get_extra_info(info)
        return None


class AsyncioBackend(AsyncNetworkBackend):
    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> AsyncNetworkStream:
        local = (local_address, 0) if local_address else None
        return await self._connect(
            lambda loop, inbox: loop.create_connection(lambda: inbox, host, port, local_addr=local),
            timeout,
            socket_options,
        )

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> AsyncNetworkStream:
        return await self._connect(
            lambda loop, inbox: loop.create_unix_connection(lambda: inbox, path),
            timeout,
            socket_options,
        )

    async def _connect(
        self, open_: Any, timeout: float | None, socket_options: Iterable[SocketOption] | None
    ) -> AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        inbox = _Inbox()
        try:
            transport, _ = await asyncio.wait_for(open_(loop, inbox), timeout)
        except TimeoutError:
            raise ConnectTimeout("timed out connecting") from None
        except OSError as error:
            raise ConnectError(str(error) or type(error).__name__) from None
        sock: socket.socket | None = transport.get_extra_info("socket")
        for option in socket_options or ():
            if sock is not None:
                sock.setsockopt(*option)
        return AsyncioStream(transport, inbox)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class AsyncioTransport(httpx.AsyncHTTPTransport):
    """httpx's own transport (its request and error mapping), its connections on asyncio."""

    def __init__(self, *, verify: ssl.SSLContext) -> None:
        super().__init__(verify=verify)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=verify,
            max_connections=100,
            max_keepalive_connections=20,
            keepalive_expiry=KEEPALIVE_S,
            network_backend=AsyncioBackend(),
        )

    def has_idle(self, url: str) -> bool:
        """Whether the pool holds an idle connection a request to ``url`` could take."""
        origin = httpx.URL(url)
        target = httpcore.Origin(
            origin.raw_scheme, origin.raw_host, origin.port or _PORTS.get(origin.scheme, 80)
        )
        return any(
            conn.is_idle() and conn.can_handle_request(target) for conn in self._pool.connections
        )


_PORTS = {"http": 80, "https": 443}
