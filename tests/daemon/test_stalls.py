"""The stall monitor names what held the event loop.

A daemon's connection is served in process over a socket pair; one handler is
swapped for one that blocks the loop for 60 ms (a computation on the loop, as a
read-only view before the view worker was). The monitor's report counts that stall,
names the request that caused it, and times a full collection made on the loop.
"""

from __future__ import annotations

import asyncio
import gc
import json
import socket
import time
from asyncio import events
from pathlib import Path
from typing import Any

import pytest

import bonsai.daemon.handlers  # noqa: F401  (registers the handlers)
from bonsai.daemon import rpc
from bonsai.daemon.rpc import Writer, serve_stream
from bonsai.daemon.stalls import StallMonitor, bucket
from bonsai.daemon.state import Daemon
from bonsai.protocol import models as m
from bonsai.services.store.db import open_database

BLOCK_S = 0.06


async def _blocking_status(ctx: rpc.Ctx, params: Any) -> m.Empty:
    time.sleep(BLOCK_S)  # holds the loop: nothing else runs meanwhile
    return m.Empty()


async def _request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, msg_id: int, method: str
) -> dict[str, Any]:
    body = json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": {}}).encode()
    writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    while True:
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(head.split(b":")[1].split(b"\r\n")[0])
        message = json.loads(await reader.readexactly(length))
        if message.get("id") == msg_id:
            return message  # type: ignore[no-any-return]


async def test_a_blocking_handler_shows_as_a_stall_named_by_its_method(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(rpc.HANDLERS, "bonsai/daemon/status", _blocking_status)
    db_path = tmp_path / "bonsai.db"
    daemon = Daemon(tmp_path, open_database(db_path), db_path)
    ours, theirs = socket.socketpair()
    server_reader, server_writer = await asyncio.open_connection(sock=ours)
    reader, writer = await asyncio.open_connection(sock=theirs)
    served = asyncio.ensure_future(
        serve_stream(
            daemon,
            "unix",
            server_reader,
            Writer(server_writer.write, server_writer.close),
            server_writer.close,
        )
    )
    monitor = StallMonitor(asyncio.get_running_loop())
    monitor.start()
    try:
        await asyncio.sleep(0.05)  # ticks on time first
        answer = await _request(reader, writer, 1, "bonsai/daemon/status")
        assert answer.get("result") == {}
        await asyncio.sleep(0.05)
        garbage = [[] for _ in range(50_000)]
        for item in garbage:
            item.append(item)  # cycles: only the collector frees them
        del garbage, item
        asyncio.get_running_loop().call_soon(gc.collect)
        await asyncio.sleep(0.05)
    finally:
        report_path = tmp_path / "stalls.json"
        monitor.write(report_path)
        writer.close()
        await asyncio.wait_for(served, 10)
        daemon.db.close()
    report = json.loads(report_path.read_text())
    assert report["ticks"] > 0
    name = "task bonsai/daemon/status"
    slow = {c["name"]: c for c in report["slow_callbacks"]}
    assert slow[name]["count"] == 1 and slow[name]["max_ms"] >= BLOCK_S * 1000
    # the tick due while it blocked ran at least that much less one tick late, and
    # the stall names it (as its cause unless the machine kept the loop waiting longer)
    blocked = [s for s in monitor.stalls if s.callback == f"callback {name}"]
    assert len(blocked) == 1, report["worst"]
    assert blocked[0].late_ms >= (BLOCK_S - 0.005) * 1000 - 1
    assert sum(report["histogram"].values()) == report["stalls"] == len(monitor.stalls)
    assert report["histogram"][bucket(blocked[0].late_ms)] >= 1
    assert report["gc"]["by_generation"]["gen2"]["count"] >= 1
    assert report["gc"]["by_generation"]["gen2"]["max_ms"] > 0


async def test_a_stopped_monitor_leaves_the_loop_and_the_collector_as_they_were() -> None:
    before_run, before_callbacks = events.Handle._run, list(gc.callbacks)
    monitor = StallMonitor(asyncio.get_running_loop())
    monitor.start()
    assert events.Handle._run is not before_run
    await asyncio.sleep(0.02)
    monitor.stop()
    assert events.Handle._run is before_run
    assert gc.callbacks == before_callbacks
    ticks = monitor.ticks
    await asyncio.sleep(0.02)
    assert monitor.ticks == ticks  # no tick after the stop
