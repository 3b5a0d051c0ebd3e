"""Turns, spilled tool outputs, and the crash-safe partial reply of a running turn.

**Invariant:** a half-streamed assistant reply lives only in ``partials`` until
the turn commits it. After a crash, :func:`recover_partials` appends it to the
log with status ``interrupted`` (shown to users, never sent to the model as if
complete) and removes the partial, so nothing is lost and nothing duplicated.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import apsw

from bonsai.domain import Message, StoredMessage, ToolCall
from bonsai.services.store.sessions import SessionStore


@dataclass(frozen=True)
class TurnRow:
    session_id: str
    turn_id: str
    n: int
    status: str
    usage: dict[str, Any] | None
    events: list[dict[str, Any]]
    started_at: float
    ended_at: float | None


class TurnStore:
    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn

    def start(self, session_id: str, turn_id: str) -> int:
        with self.conn:
            row = self.conn.execute(
                "SELECT coalesce(max(n), 0) FROM turns WHERE session_id = ?", (session_id,)
            ).fetchone()
            n = (int(row[0]) if row else 0) + 1
            self.conn.execute(
                "INSERT INTO turns(session_id, turn_id, n, status, started_at)"
                " VALUES (?, ?, ?, 'running', ?)",
                (session_id, turn_id, n, time.time()),
            )
        return n

    def finish(
        self,
        session_id: str,
        turn_id: str,
        status: str,
        usage: dict[str, Any] | None,
        events: list[dict[str, Any]],
    ) -> None:
        with self.conn:
            self.conn.execute(
                "UPDATE turns SET status = ?, usage = ?, events = ?, ended_at = ?"
                " WHERE session_id = ? AND turn_id = ?",
                (
                    status,
                    json.dumps(usage) if usage is not None else None,
                    json.dumps(events),
                    time.time(),
                    session_id,
                    turn_id,
                ),
            )

    def add_events(self, session_id: str, events: list[dict[str, Any]]) -> None:
        """Attach events made outside a turn (a manual compaction) to the latest turn."""
        row = self.conn.execute(
            "SELECT turn_id, events FROM turns WHERE session_id = ? ORDER BY n DESC LIMIT 1",
            (session_id,),
        ).fetchone()
        if row is None:
            return
        merged = json.loads(row[1] or "[]") + events
        with self.conn:
            self.conn.execute(
                "UPDATE turns SET events = ? WHERE session_id = ? AND turn_id = ?",
                (json.dumps(merged), session_id, row[0]),
            )

    def list(self, session_id: str) -> list[TurnRow]:
        rows = self.conn.execute(
            "SELECT session_id, turn_id, n, status, usage, events, started_at, ended_at"
            " FROM turns WHERE session_id = ? ORDER BY n",
            (session_id,),
        )
        return [
            TurnRow(
                r[0],
                r[1],
                r[2],
                r[3],
                json.loads(r[4]) if r[4] else None,
                json.loads(r[5] or "[]"),
                r[6],
                r[7],
            )
            for r in rows
        ]

    def count(self, session_id: str) -> int:
        row = self.conn.execute(
            "SELECT count(*) FROM turns WHERE session_id = ?", (session_id,)
        ).fetchone()
        return int(row[0]) if row else 0

    # -------------------------------------------------------------- partial replies
    def save_partial(self, session_id: str, turn_id: str, content: str) -> None:
        with self.conn:
            self.conn.execute(
                "INSERT INTO partials(session_id, turn_id, content, updated_at) VALUES (?,?,?,?)"
                " ON CONFLICT(session_id, turn_id) DO UPDATE SET content = excluded.content,"
                " updated_at = excluded.updated_at",
                (session_id, turn_id, content, time.time()),
            )

    def clear_partial(self, session_id: str, turn_id: str) -> None:
        with self.conn:
            self.conn.execute(
                "DELETE FROM partials WHERE session_id = ? AND turn_id = ?", (session_id, turn_id)
            )


def open_calls(messages: list[StoredMessage]) -> list[ToolCall]:
    """Committed tool calls that have no result yet."""
    answered = {s.message.tool_call_id for s in messages if s.message.role == "tool"}
    return [
        call
        for s in messages
        if s.message.role == "assistant" and s.message.status == "complete"
        for call in s.message.tool_calls
        if call.id not in answered
    ]


def synthetic_result(call: ToolCall, why: str) -> Message:
    return Message(role="tool", content=why, tool_call_id=call.id, name=call.name, is_error=True)


def recover_after_crash(conn: apsw.Connection) -> dict[str, int]:
    """Repair what a killed daemon left: partial replies and unanswered tool calls."""
    partials = recover_partials(conn)
    store = SessionStore(conn)
    closed = 0
    for (session_id,) in list(
        conn.execute("SELECT DISTINCT session_id FROM turns WHERE status = 'interrupted'")
    ):
        missing = open_calls(store.messages(session_id))
        if missing:
            why = "not run: the daemon stopped before this tool call finished"
            store.append_many(session_id, [synthetic_result(c, why) for c in missing])
            closed += len(missing)
    return {"partials": partials, "open_calls": closed}


def recover_partials(conn: apsw.Connection) -> int:
    """After a crash: commit each half-streamed reply as ``interrupted``; close its turn."""
    store = SessionStore(conn)
    rows = list(conn.execute("SELECT session_id, turn_id, content FROM partials"))
    for session_id, turn_id, content in rows:
        with conn:
            if content:
                message = Message(role="assistant", content=content, status="interrupted")
                store.append(session_id, message, turn_id=turn_id)
            conn.execute(
                "DELETE FROM partials WHERE session_id = ? AND turn_id = ?", (session_id, turn_id)
            )
    with conn:
        conn.execute(
            "UPDATE turns SET status = 'interrupted', ended_at = ? WHERE status = 'running'",
            (time.time(),),
        )
    return len(rows)


class ToolOutputStore:
    """Full outputs of truncated or evicted tool results, per session and call id."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn

    def save(self, session_id: str, tool_call_id: str, content: str) -> None:
        with self.conn:
            self.conn.execute(
                "INSERT INTO tool_outputs(session_id, tool_call_id, content) VALUES (?, ?, ?)"
                " ON CONFLICT(session_id, tool_call_id) DO UPDATE SET content = excluded.content",
                (session_id, tool_call_id, content),
            )

    def get(self, session_id: str, tool_call_id: str) -> str | None:
        row = self.conn.execute(
            "SELECT content FROM tool_outputs WHERE session_id = ? AND tool_call_id = ?",
            (session_id, tool_call_id),
        ).fetchone()
        return str(row[0]) if row else None

    def has(self, session_id: str, tool_call_id: str) -> bool:
        return self.get(session_id, tool_call_id) is not None

    def copy(self, source: str, target: str, tool_call_ids: list[str]) -> int:
        """Branching copies, not shares: give ``target`` its own copies."""
        copied = 0
        with self.conn:
            for call_id in tool_call_ids:
                content = self.get(source, call_id)
                if content is not None:
                    self.save(target, call_id, content)
                    copied += 1
        return copied
