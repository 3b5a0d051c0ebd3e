"""Many clients, one daemon: ``bonsai connect`` bridges to a shared socket daemon."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
from pathlib import Path

from bonsai_testing import BONSAI, bonsai_env, close_client, events_of, rpc, start_client


async def _connect(home: Path):
    return await start_client([*BONSAI, "connect"], bonsai_env(home))


async def test_three_clients_share_one_session(home: Path, tmp_path: Path) -> None:
    a, b, c = await asyncio.gather(_connect(home), _connect(home), _connect(home))
    try:
        statuses = [await rpc(x, "bonsai/daemon/status") for x in (a, b, c)]
        assert len({s["pid"] for s in statuses}) == 1, "all three share one daemon"
        assert statuses[-1]["clients"] == 3

        sid = (await rpc(a, "bonsai/session/create", {"workspace": str(tmp_path)}))["sessionId"]
        for client in (a, b, c):
            await rpc(client, "bonsai/session/attach", {"sessionId": sid})
        await rpc(a, "bonsai/session/append", {"sessionId": sid, "role": "user", "content": "1"})
        await rpc(b, "bonsai/session/append", {"sessionId": sid, "role": "user", "content": "2"})
        for client in (a, b, c):
            events = events_of(client)
            await events.wait_for("bonsai/session/event", lambda p: p["message"]["content"] == "2")
            seen = [p["message"]["content"] for p in events.of("bonsai/session/event")]
            assert seen == ["1", "2"], "every client sees every event in the same order"

        # one client leaving (LSP shutdown/exit) leaves the others working
        await close_client(a)
        await rpc(c, "bonsai/session/append", {"sessionId": sid, "role": "user", "content": "3"})
        await events_of(b).wait_for(
            "bonsai/session/event", lambda p: p["message"]["content"] == "3"
        )
        assert (await rpc(b, "bonsai/daemon/status"))["clients"] == 2
    finally:
        await asyncio.gather(close_client(b), close_client(c))

    # the daemon outlives its clients and keeps the session
    again = await _connect(home)
    try:
        listed = await rpc(again, "bonsai/session/list")
        assert listed["sessions"][0]["messageCount"] == 3
        assert (await rpc(again, "bonsai/daemon/status"))["pid"] == statuses[0]["pid"]
    finally:
        await close_client(again)


async def test_detached_client_stops_receiving(home: Path, tmp_path: Path) -> None:
    a, b = await asyncio.gather(_connect(home), _connect(home))
    try:
        sid = (await rpc(a, "bonsai/session/create", {"workspace": str(tmp_path)}))["sessionId"]
        await rpc(a, "bonsai/session/attach", {"sessionId": sid})
        await rpc(b, "bonsai/session/attach", {"sessionId": sid})
        await rpc(b, "bonsai/session/detach", {"sessionId": sid})
        await rpc(b, "bonsai/session/append", {"sessionId": sid, "role": "user", "content": "x"})
        await events_of(a).wait_for("bonsai/session/event")
        await rpc(b, "bonsai/daemon/status")  # flush: any notification would have come first
        assert events_of(b).of("bonsai/session/event") == []
    finally:
        await asyncio.gather(close_client(a), close_client(b))


def test_parallel_connect_starts_one_daemon(home: Path) -> None:
    init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "bonsai/daemon/status"}).encode()
    frame = b"Content-Length: %d\r\n\r\n%s" % (len(init), init)
    procs = [
        subprocess.Popen(
            [*BONSAI, "connect"],
            env=bonsai_env(home),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(4)
    ]
    pids = set()
    for proc in procs:
        out, _ = proc.communicate(frame, timeout=60)
        body = out.split(b"\r\n\r\n", 1)[1]
        pids.add(json.loads(body)["result"]["pid"])
    assert len(pids) == 1, f"one daemon expected, got {pids}"
    info = json.loads((home / "daemon.json").read_text())
    assert info["pid"] in pids
    assert stat.S_IMODE(os.stat(home / "daemon.json").st_mode) == 0o600
    sock = Path(info["socket"])
    assert stat.S_IMODE(os.stat(sock).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(sock.parent).st_mode) == 0o700


def test_second_daemon_on_the_same_database_refuses(home: Path) -> None:
    subprocess.run([*BONSAI, "status"], env=bonsai_env(home), check=True, capture_output=True)
    second = subprocess.run(
        [*BONSAI, "serve", "--socket", str(home / "other.sock")],
        env=bonsai_env(home),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert second.returncode == 2
    assert "already owns" in second.stderr
    assert "bonsai connect" in second.stderr


def test_tcp_refuses_non_loopback(home: Path) -> None:
    result = subprocess.run(
        [*BONSAI, "serve", "--tcp", "0.0.0.0:0"],
        env=bonsai_env(home),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2
    assert "loopback" in result.stderr
