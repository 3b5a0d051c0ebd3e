"""The measuring side of ``bench/load.py``: light clients and a stream server
that keep out of the way of what they measure.

Every client is one asyncio connection in one event loop (no thread per client,
so no client waits for the GIL behind another), stamping each frame when it is
read. The timestamped SSE server runs in its own process, so its clock is not
delayed by the clients either.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from bonsai.daemon import lifecycle

Notification = Callable[[str, dict[str, Any], float], None]


class AsyncClient:
    """One JSON-RPC connection to the daemon's socket; notifications carry their arrival time."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._timed: dict[int, dict[str, Any]] = {}  # a timed request's stamps, by id
        self.on_notification: Notification | None = None
        self._task = asyncio.ensure_future(self._read_loop())

    @classmethod
    async def connect(cls, home: Path) -> AsyncClient:
        info = lifecycle.read_daemon_json(home) or {}
        reader, writer = await asyncio.open_unix_connection(str(info["socket"]), limit=2**24)
        client = cls(reader, writer)
        await client.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        client._send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        return client

    def _send(self, payload: dict[str, Any]) -> None:
        body = json.dumps(payload).encode()
        self.writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        msg_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[msg_id] = future
        self._send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params or {}})
        return await future

    async def timed(
        self, method: str, params: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """The result and this side's stamps (wall clock): ``sent``, ``head`` (the
        answer's first header line read), ``body`` (its body read), ``parsed``; and
        ``trace``, the daemon's stamps when it traces (``BONSAI_CTX_TRACE``)."""
        msg_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[msg_id] = future
        stamps: dict[str, Any] = {}
        self._timed[msg_id] = stamps
        stamps["sent"] = time.time()
        self._send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params or {}})
        try:
            return await future, stamps
        finally:
            self._timed.pop(msg_id, None)

    async def _read_loop(self) -> None:
        try:
            while True:
                length = 0
                head = 0.0
                while True:
                    line = await self.reader.readline()
                    head = head or time.time()
                    if not line:
                        return
                    if line in (b"\r\n", b"\n"):
                        break
                    name, _, value = line.partition(b":")
                    if name.lower() == b"content-length":
                        length = int(value)
                raw = await self.reader.readexactly(length)
                body = time.time()
                message = json.loads(raw)
                at = time.time()
                stamps = self._timed.get(message.get("id")) if "method" not in message else None
                if stamps is not None:
                    stamps.update(head=head, body=body, parsed=at, trace=message.get("trace"))
                self._dispatch(message, at)
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            for future in self._waiting.values():
                if not future.done():
                    future.set_exception(ConnectionError("the daemon closed the connection"))

    def _dispatch(self, message: dict[str, Any], at: float) -> None:
        if "method" in message:
            if "id" in message:  # a request to the client: none is expected here
                error = {"code": -32601, "message": "not handled"}
                self._send({"jsonrpc": "2.0", "id": message["id"], "error": error})
            elif self.on_notification is not None:
                self.on_notification(message["method"], message.get("params") or {}, at)
            return
        future = self._waiting.pop(message.get("id"), None)  # type: ignore[arg-type]
        if future is None or future.done():
            return
        if "error" in message:
            future.set_exception(RuntimeError(str(message["error"])))
        else:
            future.set_result(message.get("result"))

    async def close(self) -> None:
        self.writer.close()
        self._task.cancel()


# ----------------------------------------------------------------- the stream server process
def _chunk(tokens_sent: int | None, tokens: int) -> bytes:
    """One SSE event: a delta stamped with its send time, or (``None``) the last chunk."""
    if tokens_sent is None:
        end = {
            "id": "x",
            "object": "chat.completion.chunk",
            "model": "gpt-4o-mini",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": 100,
                "completion_tokens": tokens,
                "total_tokens": 100 + tokens,
            },
        }
        return b"data: " + json.dumps(end).encode() + b"\n\ndata: [DONE]\n\n"
    chunk = {
        "id": "x",
        "object": "chat.completion.chunk",
        "model": "gpt-4o-mini",
        "choices": [
            {"index": 0, "delta": {"content": f"[{time.time():.6f}]"}, "finish_reason": None}
        ],
    }
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


async def _handle(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, tokens: int, keep_alive: bool
) -> None:
    """Serve requests on one connection: with ``keep_alive`` (as real providers do) each
    reply is chunked and the connection waits for the next request; without, one reply
    ends by closing the connection (every turn a new connection)."""
    try:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            length = next(
                (
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                ),
                0,
            )
            await reader.readexactly(length)
            framing = b"transfer-encoding: chunked" if keep_alive else b"connection: close"
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n%s\r\n\r\n" % framing
            )
            for n in [*range(tokens), None]:
                data = _chunk(n, tokens)
                writer.write(b"%x\r\n%s\r\n" % (len(data), data) if keep_alive else data)
                await writer.drain()
                if n is not None:
                    await asyncio.sleep(0.002)
            if not keep_alive:
                return
            writer.write(b"0\r\n\r\n")
            await writer.drain()
    except ConnectionError:
        return
    finally:
        writer.close()


async def _serve(tokens: int, keep_alive: bool) -> None:
    server = await asyncio.start_server(
        lambda r, w: _handle(r, w, tokens, keep_alive), "127.0.0.1", 0
    )
    print(server.sockets[0].getsockname()[1], flush=True)
    await server.serve_forever()


def start_stream_process(tokens: int, keep_alive: bool = True) -> tuple[subprocess.Popen[str], int]:
    """The timestamped stream server in its own process; (process, port). It keeps each
    connection open for the next request unless ``keep_alive`` is False."""
    proc = subprocess.Popen(
        [sys.executable, __file__, str(tokens), "keep" if keep_alive else "close"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    return proc, int(proc.stdout.readline())


def cpu_s(pid: int | None = None) -> float:
    """User + system CPU seconds of a process (this one by default)."""
    return sum(cpu_split(pid))


def cpu_split(pid: int | None = None) -> tuple[float, float]:
    """(user, system) CPU seconds of a process (this one by default): the system part is
    the kernel's work on the process's behalf (its socket calls, epoll, SQLite's writes)."""
    if pid is None:
        times = os.times()
        return times.user, times.system
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


if __name__ == "__main__":
    asyncio.run(_serve(int(sys.argv[1]), sys.argv[2:] != ["close"]))
