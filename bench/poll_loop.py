"""What one kept ``bonsai/ctx/get`` costs the event loop: its thread's CPU per answer.

The daemon's wire (``rpc.serve_stream``: framing, pygls' dispatch, the handler's steps
on the loop, the response written) runs in process over a socket pair; the client is
a thread with a blocking socket, asking ``--gets`` times in a row for a view of a
session that does not move (every answer but the first is a kept one, as an open
ledger polling an idle session gets). Reported: the loop thread's CPU time per answer
(``time.thread_time``, which load distorts least) and the answer's size; with
``--profile``, where that time goes (cProfile on the loop thread, the same clock).

    python bench/poll_loop.py [--history 20] [--gets 2000] [--view ledger|wire|turns] [--profile]

Bounded: a fixed count of requests over a local socket pair, a few seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import pstats
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

import bonsai.daemon.handlers  # noqa: F401  (registers the handlers)
from bonsai.daemon.rpc import Writer, serve_stream
from bonsai.daemon.state import Daemon
from bonsai.domain import Message
from bonsai.services.store.db import open_database

CHUNK = "lorem ipsum dolor sit amet " * 370  # ~2,000 tokens


def _frame(payload: dict[str, Any]) -> bytes:
    body = json.dumps(payload).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def _read_answer(sock: socket.socket, buffer: bytearray) -> bytes:
    while True:
        head_end = buffer.find(b"\r\n\r\n")
        if head_end >= 0:
            length = int(bytes(buffer[:head_end]).split(b":")[1])
            end = head_end + 4 + length
            if len(buffer) >= end:
                body = bytes(buffer[head_end + 4 : end])
                del buffer[:end]
                return body
        chunk = sock.recv(1 << 20)
        if not chunk:
            raise ConnectionError("the daemon closed the connection")
        buffer += chunk


def _client(sock: socket.socket, params: dict[str, Any], gets: int, sizes: list[int]) -> None:
    buffer = bytearray()
    for n in range(gets):
        request = {"jsonrpc": "2.0", "id": n + 1, "method": "bonsai/ctx/get", "params": params}
        sock.sendall(_frame(request))
        sizes.append(len(_read_answer(sock, buffer)))


async def run(args: argparse.Namespace) -> None:
    home = Path(tempfile.mkdtemp(prefix="bonsai-poll-loop-"))
    workspace = home / "project"
    workspace.mkdir()
    db_path = home / "bonsai.db"
    daemon = Daemon(home, open_database(db_path), db_path)
    sid = daemon.store.create(str(workspace)).session_id
    for n in range(args.history):
        daemon.store.append(sid, Message(role="user" if n % 2 == 0 else "assistant", content=CHUNK))
    ours, theirs = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=ours)
    served = asyncio.ensure_future(
        serve_stream(daemon, "unix", reader, Writer(writer.write, writer.close), writer.close)
    )
    params = {"sessionId": sid, "view": args.view}
    warm: list[int] = []
    await asyncio.to_thread(_client, theirs, params, 3, warm)  # the first computes the view
    profiler = cProfile.Profile(time.thread_time) if args.profile else None
    sizes: list[int] = []
    thread = threading.Thread(target=_client, args=(theirs, params, args.gets, sizes))
    cpu0, wall0 = time.thread_time(), time.perf_counter()
    if profiler is not None:
        profiler.enable()
    thread.start()
    while thread.is_alive():
        await asyncio.sleep(0.01)
    if profiler is not None:
        profiler.disable()
    cpu, wall = time.thread_time() - cpu0, time.perf_counter() - wall0
    print(
        f"kept ctx/get ({args.view}, {args.history} messages, answer {sizes[-1]:,} bytes): "
        f"{1e6 * cpu / args.gets:.0f} µs of the loop thread's CPU per answer "
        f"({1e6 * wall / args.gets:.0f} µs wall, {args.gets:,} answers)"
    )
    theirs.close()
    await asyncio.wait_for(served, 10)
    daemon.views.close()
    daemon.db.close()
    if profiler is not None:
        stats = pstats.Stats(profiler)
        stats.sort_stats("tottime").print_stats(25)
        stats.sort_stats("cumulative").print_stats(40)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--history", type=int, default=20)
    parser.add_argument("--gets", type=int, default=2000)
    parser.add_argument("--view", choices=["ledger", "wire", "turns"], default="ledger")
    parser.add_argument("--profile", action="store_true")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
