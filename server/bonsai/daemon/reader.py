"""A connection's reading side: an ``asyncio.Protocol`` that splits frames as bytes arrive.

``data_received`` feeds a :class:`~bonsai.daemon.framing.FrameSplitter` and hands each
whole body to its :class:`Endpoint` at once, inside the read's own callback: no task
waits on a stream reader line by line and body by body (each of those awaits was a
turn of a busy loop), no async generator. The same protocol serves the local socket,
TCP and stdio (a file or ``/dev/null`` on stdin is fed by a thread, :func:`feed_from`).

Flow control: while the connection's transport says its writes back up
(``pause_writing``, past its high-water mark), no further frame is dispatched and the
socket is not read: a client that does not read its answers stops being read, so it
cannot make the daemon hold more than the transport's buffer and one answer for it.
Dispatch and reading go on at ``resume_writing``.

A broken frame ends that connection only (:meth:`Endpoint.broken`, then
:meth:`Endpoint.ended`); the end of the stream inside a frame is a broken frame too.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Protocol

from bonsai.daemon.framing import FrameError, FrameSplitter

log = logging.getLogger("bonsai.rpc")
# a connection's unsent answers past which it is not read (an answer is some 100 KB)
WRITE_HIGH_WATER = 4 * 1024 * 1024


class Endpoint(Protocol):
    """What serves one connection's frames."""

    def body(self, data: bytes) -> None:
        """One whole frame's body, in the order received."""

    def broken(self, error: FrameError) -> None:
        """The framing broke: no more bodies come; :meth:`ended` follows."""

    def ended(self) -> None:
        """The stream ended (end of input, a broken frame, the connection lost); once."""


class FramedReader(asyncio.Protocol):
    """Frames read in the transport's callback, dispatched at once, paused with the writes."""

    def __init__(self, endpoint: Endpoint | None = None) -> None:
        self.endpoint = endpoint
        self.transport: asyncio.BaseTransport | None = None
        self._frames = FrameSplitter()
        self._writes_paused = False
        self._eof = False
        self._done = False

    # ------------------------------------------------------------ the transport's calls

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        if isinstance(transport, asyncio.WriteTransport):
            with contextlib.suppress(RuntimeError, AttributeError):
                transport.set_write_buffer_limits(high=WRITE_HIGH_WATER)

    def data_received(self, data: bytes) -> None:
        if self._done:
            return
        self._frames.feed(data)
        self._dispatch()

    def eof_received(self) -> bool:
        self._eof = True
        if not self._writes_paused:
            self._dispatch()
            self._finish_input()
        return True  # the answers still being computed are written before the close

    def connection_lost(self, exc: Exception | None) -> None:
        if exc is not None and not self._done:
            log.info("a client reset the connection (%s)", type(exc).__name__)
        self._end()

    def pause_writing(self) -> None:
        self._writes_paused = True
        self._reading(False)

    def resume_writing(self) -> None:
        self._writes_paused = False
        self._dispatch()
        if self._writes_paused or self._done:
            return
        if self._eof:
            self._finish_input()
        else:
            self._reading(True)

    # ------------------------------------------------------------ frames

    def _dispatch(self) -> None:
        """Hand every whole frame in the buffer to the endpoint, until the writes back up."""
        endpoint = self.endpoint
        while not self._writes_paused and not self._done and endpoint is not None:
            try:
                body = self._frames.next()
            except FrameError as error:
                self._broken(error)
                return
            if body is None:
                return
            endpoint.body(body)

    def _finish_input(self) -> None:
        if self._done:
            return
        try:
            self._frames.end()
        except FrameError as error:
            self._broken(error)
            return
        self._end()

    def _broken(self, error: FrameError) -> None:
        if self.endpoint is not None and not self._done:
            self.endpoint.broken(error)
        self._reading(False)
        self._end()

    def _end(self) -> None:
        if self._done:
            return
        self._done = True
        if self.endpoint is not None:
            self.endpoint.ended()

    def _reading(self, on: bool) -> None:
        transport = self.transport
        if not isinstance(transport, asyncio.ReadTransport) or transport.is_closing():
            return
        with contextlib.suppress(RuntimeError, AttributeError, NotImplementedError):
            if on:
                transport.resume_reading()
            else:
                transport.pause_reading()


async def feed_from(reader: asyncio.StreamReader, protocol: FramedReader) -> None:
    """Feed ``protocol`` from a stream reader until its end (a connection handed over
    as a stream pair: tests, benches)."""
    try:
        while chunk := await reader.read(1 << 16):
            protocol.data_received(chunk)
    except (ConnectionResetError, BrokenPipeError) as error:
        protocol.connection_lost(error)
        return
    protocol.eof_received()
