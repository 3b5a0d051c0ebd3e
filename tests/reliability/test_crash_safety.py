"""SIGKILL the daemon at every write phase of streaming, tool-using turns (fixed seed).

Each kill lands at a chosen phase of a turn, seen from the turn's own events
(the request in flight, the first step streaming, each tool running with its
call committed, one result in and the other not, the answer streaming with a
partial on disk, the after-turn steps), each with a seeded jitter, plus a few kills
at random moments. After every restart: no committed message is lost
or duplicated, no partial reply is left dangling, every tool call has exactly
one result, a half-streamed reply is marked interrupted and never sent to the
model, pinned ledger state survives, and the session carries on.
"""

from __future__ import annotations

import json
import random
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bonsai.cli.client import DaemonClient
from bonsai.sim import Script
from bonsai.sim.runner import SimulatorThread
from bonsai.sim.script import Reply, Rule, ToolCallSpec
from reliability.homes import client, kill, start_daemon

SEED = 20261129
ANSWER_WORDS = 1000  # the answer streams for >3 s (3 ms a word): a kill at word 100 is mid-stream
Events = list[dict[str, Any]]


def streamed(events: Events) -> str:
    """The text streamed since the last tool result (the answer step's, once tools ran)."""
    text = ""
    for event in events:
        text = "" if event["kind"] == "toolResult" else text + event.get("text", "")
    return text


def nth(kind: str, n: int) -> Callable[[Events], bool]:
    return lambda events: sum(e["kind"] == kind for e in events) >= n


# (phase, the condition on the turn's events after which the kill lands)
KILL_POINTS: list[tuple[str, Callable[[Events], bool]]] = [
    ("the model request is in flight", lambda events: True),
    ("the first step streams", nth("delta", 1)),
    ("the first tool runs, its call committed", nth("toolCall", 1)),
    ("one result is in, the other tool has not run", nth("toolResult", 1)),
    ("the second tool (bash) runs", nth("toolCall", 2)),
    ("the answer streams, a partial on disk", lambda events: "word100 " in streamed(events)),
    ("the turn is done, its after-steps run", nth("done", 1)),
]
RANDOM_KILLS = 3  # and a few at random moments, as a user's crash would land


def script() -> Script:
    """Every turn reads a file and runs bash, then answers at length. By rule, not in
    order: a killed turn's request must not shift the replies of the turns after it."""
    tools = Reply(
        text="Reading first.",
        tool_calls=[
            ToolCallSpec(name="read_file", arguments={"path": "notes.txt"}),
            ToolCallSpec(name="bash", arguments={"command": "echo ran"}),
        ],
    )
    answer = Reply(text=" ".join(f"word{j}" for j in range(ANSWER_WORDS)))
    rules = [Rule(match=r"\btask-\w+", regex=True, reply=tools), Rule(match="ran", reply=answer)]
    return Script(rules=rules, latency_ms=3)


def plan(rng: random.Random) -> list[tuple[str, Callable[[Events], bool] | None, float]]:
    """Every kill point (a seeded jitter after it) and the random kills, shuffled."""
    runs: list[tuple[str, Callable[[Events], bool] | None, float]] = [
        (phase, when, rng.uniform(0.0, 0.03)) for phase, when in KILL_POINTS
    ]
    runs += [("a random moment", None, rng.uniform(0.0, 0.5)) for _ in range(RANDOM_KILLS)]
    rng.shuffle(runs)
    return runs


def wait_for(c: DaemonClient, events: Events, turn: str, when: Callable[[Events], bool]) -> bool:
    """Pump until the turn's events meet ``when`` (True) or the turn ends first (False)."""
    while True:
        mine = [e for e in events if e.get("turnId") == turn]
        if when(mine):
            return True
        if any(e["kind"] in ("done", "error") for e in mine):
            return False
        c.pump()


def attached(home: Path, sid: str | None, events: Events) -> DaemonClient:
    """A client that records chat events into ``events`` (attached to ``sid`` if given)."""
    c = client(home)
    c.sock.settimeout(120)  # a turn that stops sending events fails the test, never hangs it
    c.on_notification = lambda method, params: (
        events.append(params) if method == "bonsai/chat/event" else None
    )
    if sid is not None:
        c.request("bonsai/session/attach", {"sessionId": sid})
    return c


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


@pytest.mark.timeout(600)  # 10 daemon restarts: ~40 s here, more on a loaded CI machine
def test_sigkills_at_every_write_phase_lose_and_duplicate_nothing(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    home, ws = tmp_path / "h", tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("remember the milk\n")
    home.mkdir()
    (home / "config.json").write_text(json.dumps({"tools": {"policy": {"bash": "allow"}}}))
    interrupted_ids: set[str] = set()
    events: Events = []
    with SimulatorThread(script()) as sim:
        env = {"BONSAI_PROVIDER": "sim", "BONSAI_BASE_URL": sim.openai_base_url}
        env["BONSAI_MODEL"] = "gpt-4o-mini"
        proc = start_daemon(home, **env)
        c = client(home)
        sid = c.request("bonsai/session/create", {"workspace": str(ws)})["sessionId"]
        c.request("bonsai/session/append", {"sessionId": sid, "role": "user", "content": "hi"})
        first = c.request("bonsai/ctx/get", {"sessionId": sid})["nodes"]
        pinned = next(n["id"] for n in first if n["section"] == "messages")
        c.request("bonsai/ctx/pin", {"sessionId": sid, "nodeId": pinned})
        c = attached(home, sid, events)
        before: list[tuple] = []
        for run, (phase, when, jitter) in enumerate(plan(rng)):
            turn = c.request("bonsai/chat/send", {"sessionId": sid, "text": f"task-{run}"})
            if when is not None:
                assert wait_for(c, events, turn["turnId"], when), f"run {run}: never {phase}"
            time.sleep(jitter)
            kill(proc)
            killed = snapshot(home / "bonsai.db")
            ids = [r[0] for r in killed["rows"]]
            where = f"run {run} (killed when {phase})"
            assert ids[: len(before)] == [r[0] for r in before], f"{where}: committed rows lost"
            proc = start_daemon(home, **env)
            c = attached(home, sid, events)
            after = snapshot(home / "bonsai.db")
            assert after["partials"] == 0, f"{where}: recovery commits or drops every partial"
            seqs = [r[1] for r in after["rows"]]
            assert seqs == list(range(1, len(seqs) + 1)), f"{where}: a duplicated or missing seq"
            assert len({r[0] for r in after["rows"]}) == len(after["rows"])
            assert [r[0] for r in after["rows"][: len(ids)]] == ids, "recovery only appends"
            check_pairing(after["rows"])
            assert pinned in after["state"]["pins"], "ledger actions survive"
            for message_id, _, role, body in after["rows"]:
                if role == "assistant" and json.loads(body or "{}").get("status") == "interrupted":
                    interrupted_ids.add(message_id)
            before = after["rows"]
        # the session carries on: a full turn completes after all that
        turn = c.request("bonsai/chat/send", {"sessionId": sid, "text": "task-final"})["turnId"]
        assert wait_for(c, events, turn, nth("done", 1)), "the last turn completes"
        c.request("bonsai/daemon/stop")
        proc.wait(timeout=30)
        assert interrupted_ids, "the kills mid-answer left replies marked interrupted"
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
