"""SIGKILL at random points while appends and streaming turns run at once (seeded, replayable).

20 rounds; each starts a streaming, tool-using turn in one session while a
thread sends 10 appends to another, and the daemon is killed at a random
moment (``SEED`` makes every round's moment the same on each run). After
each restart: every acknowledged append is present exactly once (an append
in flight at the kill may or may not be), no partial is left, every tool call
has exactly one result, seqs have no gaps, and the commit record never
refuses a start after a plain kill. At the end a turn completes and nothing
interrupted is sent to the model as if complete.
"""

from __future__ import annotations

import json
import random
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from bonsai.cli.client import DaemonClient
from bonsai.sim import Script
from bonsai.sim.runner import SimulatorThread
from bonsai.sim.script import Reply, ToolCallSpec
from reliability.homes import client, kill, start_daemon, stop
from reliability.test_crash_safety import check_pairing

SEED = 20261201
ROUNDS = 20
APPENDS_PER_ROUND = 10


def script() -> Script:
    steps = []
    for i in range(ROUNDS + 5):
        steps += [
            Reply(
                text=f"Step {i}: looking.",
                tool_calls=[
                    ToolCallSpec(name="read_file", arguments={"path": "notes.txt"}),
                    ToolCallSpec(name="bash", arguments={"command": "echo ran"}),
                ],
            ),
            Reply(text=" ".join(f"word{j}" for j in range(150))),
        ]
    return Script(steps=steps, latency_ms=3)


def rows(db: Path, sid: str) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(
            "SELECT id, seq, role, body, content FROM messages WHERE session_id = ? ORDER BY seq",
            (sid,),
        ).fetchall()
    finally:
        conn.close()


def partials(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("SELECT count(*) FROM partials").fetchone()[0])
    finally:
        conn.close()


def appender(home: Path, sid: str, tag: str, acked: list[str]) -> None:
    try:
        c = DaemonClient.connect(home, start=False)
        for i in range(APPENDS_PER_ROUND):
            text = f"append {tag}.{i}"
            c.request("bonsai/session/append", {"sessionId": sid, "role": "user", "content": text})
            acked.append(text)  # acknowledged: the daemon answered
    except (ConnectionError, OSError):
        return  # the kill landed


@pytest.mark.timeout(1200)  # 20 restarts; a loaded CI machine is slow to start daemons
def test_random_sigkills_during_appends_and_turns(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    home, ws = tmp_path / "h", tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("remember the milk\n")
    home.mkdir()
    (home / "config.json").write_text(json.dumps({"tools": {"policy": {"bash": "allow"}}}))
    db = home / "bonsai.db"
    acked: list[str] = []
    interrupted: set[str] = set()
    with SimulatorThread(script()) as sim:
        env = {"BONSAI_PROVIDER": "sim", "BONSAI_BASE_URL": sim.openai_base_url}
        proc = start_daemon(home, **env)
        c = client(home)
        log_sid = c.request("bonsai/session/create", {"workspace": str(ws)})["sessionId"]
        turn_sid = c.request("bonsai/session/create", {"workspace": str(ws)})["sessionId"]
        for round_no in range(ROUNDS):
            c.request("bonsai/chat/send", {"sessionId": turn_sid, "text": f"task {round_no}"})
            worker = threading.Thread(
                target=appender, args=(home, log_sid, str(round_no), acked), daemon=True
            )
            worker.start()
            time.sleep(rng.uniform(0.0, 0.8))
            kill(proc)
            worker.join(timeout=30)
            proc = start_daemon(home, **env)  # never refused: a plain kill loses nothing
            c = client(home)
            contents = [r[4] for r in rows(db, log_sid)]
            for text in acked:
                assert contents.count(text) == 1, f"round {round_no}: {text!r} not exactly once"
            assert len(contents) == len(set(contents)), "nothing is duplicated"
            turn_rows = rows(db, turn_sid)
            assert [r[1] for r in turn_rows] == list(range(1, len(turn_rows) + 1)), "no seq gaps"
            assert partials(db) == 0, "recovery commits or drops every partial"
            check_pairing([r[:4] for r in turn_rows])
            for message_id, _, role, body, _ in turn_rows:
                if role == "assistant" and json.loads(body or "{}").get("status") == "interrupted":
                    interrupted.add(message_id)
        done: dict[str, str] = {}
        c.on_notification = lambda m, p: (
            done.__setitem__(p["turnId"], p["kind"])
            if m == "bonsai/chat/event" and p["kind"] in ("done", "error")
            else None
        )
        c.request("bonsai/session/attach", {"sessionId": turn_sid})
        turn = c.request("bonsai/chat/send", {"sessionId": turn_sid, "text": "final"})["turnId"]
        while turn not in done:
            c.pump()
        assert done[turn] == "done"
        stop(proc, home)
        requests = sim.requests
    assert len(acked) >= ROUNDS, "the kills left most appends acknowledged"
    assert interrupted, "some kills landed mid-stream (the seed exercises that path)"
    by_id = {r[0]: r[4] for r in rows(db, turn_sid)}
    sent = {
        str(m.get("content"))
        for r in requests[-2:]
        for m in (r.body or {}).get("messages", [])
        if m.get("role") == "assistant"
    }
    for message_id in interrupted:
        assert by_id[message_id] not in sent, "an interrupted reply is never sent as complete"
