"""SIGKILL at chosen points while appends and streaming turns run at once (seeded, replayable).

10 rounds; each starts a streaming, tool-using turn in one session while a
thread sends 10 appends to another, and the daemon is killed at a chosen
point: in half the rounds after 0, 2, 4, 6 or 8 acknowledged appends (before
the first, and between others), in the other half while the turn's answer
streams (seen from its events), each after a seeded jitter. After each restart: every acknowledged append is present exactly once (an append
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
from bonsai.sim.runner import SimulatorThread
from reliability.homes import kill, start_daemon, stop
from reliability.test_crash_safety import (
    Events,
    attached,
    check_pairing,
    nth,
    script,
    streamed,
    wait_for,
)

SEED = 20261201
ROUNDS = 10
APPENDS_PER_ROUND = 10


def mid_answer(events: Events) -> bool:
    return "word100 " in streamed(events)


def until_acked(acked: list[str], tag: str, count: int) -> None:
    """Wait (bounded) until ``count`` appends of this round are acknowledged."""
    deadline = time.monotonic() + 60
    while sum(text.startswith(f"append {tag}.") for text in acked) < count:
        assert time.monotonic() < deadline, f"round {tag}: {count} appends never acknowledged"
        time.sleep(0.005)


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


@pytest.mark.timeout(900)  # 10 restarts; a loaded CI machine is slow to start daemons
def test_sigkills_during_appends_and_turns(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    home, ws = tmp_path / "h", tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("remember the milk\n")
    home.mkdir()
    (home / "config.json").write_text(json.dumps({"tools": {"policy": {"bash": "allow"}}}))
    db = home / "bonsai.db"
    acked: list[str] = []
    interrupted: set[str] = set()
    events: Events = []
    with SimulatorThread(script()) as sim:
        env = {"BONSAI_PROVIDER": "sim", "BONSAI_BASE_URL": sim.openai_base_url}
        proc = start_daemon(home, **env)
        c = attached(home, None, events)
        log_sid = c.request("bonsai/session/create", {"workspace": str(ws)})["sessionId"]
        turn_sid = c.request("bonsai/session/create", {"workspace": str(ws)})["sessionId"]
        c.request("bonsai/session/attach", {"sessionId": turn_sid})
        for round_no in range(ROUNDS):
            text = f"task-{round_no}"
            turn = c.request("bonsai/chat/send", {"sessionId": turn_sid, "text": text})
            worker = threading.Thread(
                target=appender, args=(home, log_sid, str(round_no), acked), daemon=True
            )
            worker.start()
            if round_no % 2 == 0:  # after 0, 2, 4, 6, 8 acknowledged appends
                until_acked(acked, str(round_no), round_no % APPENDS_PER_ROUND)
            else:  # while the answer streams
                assert wait_for(c, events, turn["turnId"], mid_answer), f"round {round_no}"
            time.sleep(rng.uniform(0.0, 0.03))
            kill(proc)
            worker.join(timeout=30)
            proc = start_daemon(home, **env)  # never refused: a plain kill loses nothing
            c = attached(home, turn_sid, events)
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
        final = c.request("bonsai/chat/send", {"sessionId": turn_sid, "text": "task-final"})
        assert wait_for(c, events, final["turnId"], nth("done", 1)), "the last turn completes"
        stop(proc, home)
        requests = sim.requests
    assert len(acked) >= ROUNDS, "the kills left most appends acknowledged"
    assert interrupted, "the kills mid-answer left replies marked interrupted"
    by_id = {r[0]: r[4] for r in rows(db, turn_sid)}
    sent = {
        str(m.get("content"))
        for r in requests[-2:]
        for m in (r.body or {}).get("messages", [])
        if m.get("role") == "assistant"
    }
    for message_id in interrupted:
        assert by_id[message_id] not in sent, "an interrupted reply is never sent as complete"
