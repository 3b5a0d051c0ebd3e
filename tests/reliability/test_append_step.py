"""A step's append is one transaction: its messages, their calls answered, the partial gone.

A reply streams long enough to leave a partial on disk; then the write that clears the
partial fails (a trigger aborts it, as a full disk or an I/O error would) and the daemon
is killed. Had the reply committed without the partial going, the restart's recovery
would commit the partial as an interrupted copy beside it: the user would see the reply
twice. In one transaction the reply is there once: what had streamed, from the partial,
marked interrupted.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from bonsai.sim import Script
from bonsai.sim.runner import SimulatorThread
from bonsai.sim.script import Reply, Rule
from reliability.homes import kill, start_daemon
from reliability.test_crash_safety import Events, attached, nth, wait_for

WORDS = 400  # 3 ms a word: the reply streams for over a second, a partial is saved


def replies(db: Path, sid: str) -> list[tuple[str, str]]:
    """(status, content) of each assistant message of the session."""
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute(
            "SELECT body, content FROM messages WHERE session_id = ? AND role = 'assistant'",
            (sid,),
        ).fetchall()
    finally:
        conn.close()
    return [(json.loads(body or "{}").get("status", "complete"), text) for body, text in rows]


def test_a_reply_whose_partial_cannot_be_cleared_is_never_kept_twice(tmp_path: Path) -> None:
    home, ws = tmp_path / "h", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    answer = " ".join(f"word{j}" for j in range(WORDS))
    script = Script(rules=[Rule(match="go", reply=Reply(text=answer))], latency_ms=3)
    db = home / "bonsai.db"
    events: Events = []
    with SimulatorThread(script) as sim:
        env = {"BONSAI_PROVIDER": "sim", "BONSAI_BASE_URL": sim.openai_base_url}
        env["BONSAI_MODEL"] = "gpt-4o-mini"
        proc = start_daemon(home, **env)
        try:
            c = attached(home, None, events)
            sid = c.request("bonsai/session/create", {"workspace": str(ws)})["sessionId"]
            c.request("bonsai/session/attach", {"sessionId": sid})
            with sqlite3.connect(db) as conn:
                conn.execute(
                    "CREATE TRIGGER partial_kept BEFORE DELETE ON partials"
                    " BEGIN SELECT RAISE(ABORT, 'the disk refused the write'); END"
                )
            turn = c.request("bonsai/chat/send", {"sessionId": sid, "text": "go"})["turnId"]
            assert wait_for(c, events, turn, nth("error", 1)), "the failed write ends the turn"
            c.close()
        finally:
            kill(proc)
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT count(*) FROM partials").fetchone()[0] == 1
            conn.execute("DROP TRIGGER partial_kept")
        proc = start_daemon(home, **env)  # recovers the partial
        kill(proc)
    kept = replies(db, sid)
    assert [status for status, _ in kept] == ["interrupted"], "the reply, once"
    assert answer.startswith(kept[0][1]), "what had streamed, never sent as if complete"
