"""SIGKILL the daemon at random points of streaming, tool-using turns (fixed seed).

After every restart: no committed message is lost or duplicated, no partial
reply is left dangling, every tool call has exactly one result, a half-streamed
reply is marked interrupted and never sent to the model, pinned ledger state
survives, and the session carries on.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from bonsai.cli.client import DaemonClient
from bonsai.sim import Script
from bonsai.sim.runner import SimulatorThread
from bonsai.sim.script import Reply, ToolCallSpec
from bonsai_testing import BONSAI, bonsai_env

RUNS = 50
SEED = 20261129


def script() -> Script:
    steps = []
    for i in range(RUNS * 2 + 10):
        steps += [
            Reply(
                text=f"Step {i}: reading.",
                tool_calls=[
                    ToolCallSpec(name="read_file", arguments={"path": "notes.txt"}),
                    ToolCallSpec(name="bash", arguments={"command": "echo ran"}),
                ],
            ),
            Reply(text=" ".join(f"word{j}" for j in range(120))),
        ]
    return Script(steps=steps, latency_ms=3)


def start_daemon(home: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [*BONSAI, "serve", "--socket", "auto"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        info = home / "daemon.json"
        if info.exists() and json.loads(info.read_text()).get("pid") == proc.pid:
            return proc
        time.sleep(0.02)
    raise AssertionError("daemon did not start")


def snapshot(db: Path) -> dict[str, Any]:
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT id, seq, role, body FROM messages ORDER BY seq").fetchall()
        partials = conn.execute("SELECT count(*) FROM partials").fetchone()[0]
        state = conn.execute("SELECT value FROM session_state WHERE key = 'context'").fetchone()
    finally:
        conn.close()
    return {"rows": rows, "partials": partials, "state": json.loads(state[0]) if state else None}


def check_pairing(rows: list[tuple]) -> None:
    calls, results = [], []
    for _, _, role, body in rows:
        data = json.loads(body or "{}")
        if role == "assistant" and data.get("status", "complete") == "complete":
            calls += [c["id"] for c in data.get("tool_calls", [])]
        if role == "tool":
            results.append(data.get("tool_call_id"))
    assert sorted(calls) == sorted(results), "every tool call has exactly one result"


@pytest.mark.timeout(600)  # 50 daemon restarts: ~100 s here, more on a loaded CI machine
def test_random_sigkills_lose_and_duplicate_nothing(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    home, ws = tmp_path / "h", tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("remember the milk\n")
    home.mkdir()
    (home / "config.json").write_text(json.dumps({"tools": {"policy": {"bash": "allow"}}}))
    interrupted_ids: set[str] = set()
    with SimulatorThread(script()) as sim:
        env = bonsai_env(
            home,
            BONSAI_PROVIDER="sim",
            BONSAI_BASE_URL=sim.openai_base_url,
            BONSAI_MODEL="gpt-4o-mini",
        )
        os.environ["BONSAI_HOME"] = str(home)
        proc = start_daemon(home, env)
        client = DaemonClient.connect(home, start=False)
        sid = client.request("bonsai/session/create", {"workspace": str(ws)})["sessionId"]
        client.request("bonsai/session/append", {"sessionId": sid, "role": "user", "content": "hi"})
        first = client.request("bonsai/ctx/get", {"sessionId": sid})["nodes"]
        pinned = next(n["id"] for n in first if n["section"] == "messages")
        client.request("bonsai/ctx/pin", {"sessionId": sid, "nodeId": pinned})
        before: list[tuple] = []
        for run in range(RUNS):
            client.request("bonsai/chat/send", {"sessionId": sid, "text": f"task {run}"})
            time.sleep(rng.uniform(0.0, 0.5))
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            killed = snapshot(home / "bonsai.db")
            ids = [r[0] for r in killed["rows"]]
            assert ids[: len(before)] == [r[0] for r in before], f"run {run}: committed rows lost"
            proc = start_daemon(home, env)
            client = DaemonClient.connect(home, start=False)
            after = snapshot(home / "bonsai.db")
            assert after["partials"] == 0, "recovery commits or drops every partial"
            seqs = [r[1] for r in after["rows"]]
            assert seqs == list(range(1, len(seqs) + 1)), "no duplicated or missing seq"
            assert len({r[0] for r in after["rows"]}) == len(after["rows"])
            assert [r[0] for r in after["rows"][: len(ids)]] == ids, "recovery only appends"
            check_pairing(after["rows"])
            assert pinned in after["state"]["pins"], "ledger actions survive"
            for message_id, _, role, body in after["rows"]:
                if role == "assistant" and json.loads(body or "{}").get("status") == "interrupted":
                    interrupted_ids.add(message_id)
            before = after["rows"]
        # the session carries on: a full turn completes after all that
        printer_done: dict[str, str] = {}
        client.on_notification = lambda m, p: (
            printer_done.__setitem__(p["turnId"], p["kind"])
            if m == "bonsai/chat/event" and p["kind"] in ("done", "error")
            else None
        )
        client.request("bonsai/session/attach", {"sessionId": sid})
        turn = client.request("bonsai/chat/send", {"sessionId": sid, "text": "final"})["turnId"]
        while turn not in printer_done:
            client.pump()
        assert printer_done[turn] == "done"
        client.request("bonsai/daemon/stop")
        proc.wait(timeout=30)
        assert interrupted_ids, "some kills landed mid-stream (the seed exercises that path)"
        sent = {
            str(m.get("content"))
            for r in sim.requests[-3:]
            for m in (r.body or {}).get("messages", [])
            if m.get("role") == "assistant"
        }
        conn = sqlite3.connect(home / "bonsai.db")
        for mid in interrupted_ids:
            row = conn.execute("SELECT content FROM messages WHERE id = ?", (mid,)).fetchone()
            assert row[0] not in sent, "an interrupted reply is never sent as if complete"
