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


TOOL_RUNS = "tool_runs"  # session_state key: tool calls started and not yet answered
NOT_RUN = "not run: the daemon stopped before this tool call started"


def outcome_unknown(detail: str) -> str:
    return (
        f"outcome unknown: the daemon stopped while it ran ({detail}); "
        "check what it did before running it again"
    )


class ToolRuns:
    """Which tool calls started, recorded before they run: after a crash, "not run" is true."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn

    def _get(self, session_id: str) -> dict[str, dict[str, Any]]:
        row = self.conn.execute(
            "SELECT value FROM session_state WHERE session_id = ? AND key = ?",
            (session_id, TOOL_RUNS),
        ).fetchone()
        return dict(json.loads(row[0])) if row else {}

    def _put(self, session_id: str, runs: dict[str, dict[str, Any]]) -> None:
        with self.conn:
            if runs:
                self.conn.execute(
                    "INSERT INTO session_state(session_id, key, value) VALUES (?, ?, ?)"
                    " ON CONFLICT(session_id, key) DO UPDATE SET value = excluded.value",
                    (session_id, TOOL_RUNS, json.dumps(runs, sort_keys=True)),
                )
            else:
                self.conn.execute(
                    "DELETE FROM session_state WHERE session_id = ? AND key = ?",
                    (session_id, TOOL_RUNS),
                )

    def starting(self, session_id: str, call_id: str, detail: str) -> None:
        runs = self._get(session_id)
        runs[call_id] = {"detail": detail[:500]}
        self._put(session_id, runs)

    def process(self, session_id: str, call_id: str, pid: int, started: int | None) -> None:
        runs = self._get(session_id)
        runs.setdefault(call_id, {"detail": "?"}).update(pid=pid, start=started)
        self._put(session_id, runs)

    def answered(self, session_id: str, call_ids: list[str]) -> None:
        runs = self._get(session_id)
        if any(call_id in runs for call_id in call_ids):
            self._put(session_id, {k: v for k, v in runs.items() if k not in call_ids})

    def all(self) -> dict[str, dict[str, dict[str, Any]]]:
        rows = self.conn.execute(
            "SELECT session_id, value FROM session_state WHERE key = ?", (TOOL_RUNS,)
        )
        return {session_id: dict(json.loads(value)) for session_id, value in rows}

    def processes(self) -> list[tuple[int, int | None]]:
        """(pid, start time) of every recorded tool process (to kill after a crash)."""
        return [
            (int(run["pid"]), run.get("start"))
            for runs in self.all().values()
            for run in runs.values()
            if run.get("pid")
        ]


def recover_after_crash(conn: apsw.Connection) -> dict[str, int]:
    """Repair what a killed daemon left: partial replies and unanswered tool calls.

    A call recorded as started gets "outcome unknown" with its command; only a
    call that never started reads "not run".
    """
    partials = recover_partials(conn)
    store = SessionStore(conn)
    runs = ToolRuns(conn)
    started = runs.all()
    closed = 0
    for (session_id,) in list(
        conn.execute("SELECT DISTINCT session_id FROM turns WHERE status = 'interrupted'")
    ):
        missing = open_calls(store.messages(session_id))
        mine = started.get(session_id, {})
        if missing:
            results = [
                synthetic_result(
                    call, outcome_unknown(mine[call.id]["detail"]) if call.id in mine else NOT_RUN
                )
                for call in missing
            ]
            store.append_many(session_id, results)
            closed += len(missing)
    for session_id in started:
        runs.answered(session_id, list(started[session_id]))
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
