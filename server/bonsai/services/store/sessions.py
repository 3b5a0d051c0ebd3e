"""Sessions and their append-only message log."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import apsw

from bonsai.domain import Message, StoredMessage
from bonsai.services.store import commit_record


class UnknownSession(LookupError):
    def __init__(self, session_id: str) -> None:
        super().__init__(f"no session {session_id!r} (it may have been deleted)")
        self.session_id = session_id


@dataclass(frozen=True)
class SessionRow:
    session_id: str
    title: str
    workspace: str
    created_at: float
    updated_at: float
    message_count: int


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


_SESSION_COLUMNS = """s.id, s.title, s.workspace, s.created_at, s.updated_at,
    (SELECT count(*) FROM messages m WHERE m.session_id = s.id)"""


# a message row, in the order :func:`stored_message` reads it
MESSAGE_COLUMNS = "id, session_id, seq, created_at, role, content, body"


def _session(row: Any) -> SessionRow:
    return SessionRow(row[0], row[1], row[2], row[3], row[4], row[5])


class SessionStore:
    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn

    # -------------------------------------------------------------- sessions
    def create(self, workspace: str, title: str | None = None) -> SessionRow:
        now = time.time()
        session_id = new_id("s")
        with self.conn:
            self.conn.execute(
                "INSERT INTO sessions(id, title, workspace, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (session_id, title or "New session", workspace, now, now),
            )
        return self.get(session_id)

    def get(self, session_id: str) -> SessionRow:
        row = self.conn.execute(
            f"SELECT {_SESSION_COLUMNS} FROM sessions s WHERE s.id = ?", (session_id,)
        ).fetchone()
        if row is None:
            raise UnknownSession(session_id)
        return _session(row)

    def exists(self, session_id: str) -> bool:
        query = "SELECT 1 FROM sessions WHERE id = ?"
        return self.conn.execute(query, (session_id,)).fetchone() is not None

    def list_sessions(self, workspace: str | None = None) -> list[SessionRow]:
        sql = f"SELECT {_SESSION_COLUMNS} FROM sessions s"
        args: tuple[Any, ...] = ()
        if workspace is not None:
            sql += " WHERE s.workspace = ?"
            args = (workspace,)
        sql += " ORDER BY s.updated_at DESC, s.id"
        return [_session(row) for row in self.conn.execute(sql, args)]

    def count(self) -> int:
        row = self.conn.execute("SELECT count(*) FROM sessions").fetchone()
        return int(row[0]) if row else 0

    def rename(self, session_id: str, title: str) -> SessionRow:
        self.get(session_id)
        with self.conn:
            self.conn.execute(
                "UPDATE sessions SET title = ?, updated_at = ? WHERE id = ?",
                (title, time.time(), session_id),
            )
        return self.get(session_id)

    def delete(self, session_id: str) -> None:
        """Delete the session and, by cascade, everything stored for it."""
        doomed = self.get(session_id).message_count
        commit_record.note_removing(self.conn, doomed)  # the record never exceeds the truth
        with self.conn:
            self.conn.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            self.conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))

    # -------------------------------------------------------------- messages
    def append(
        self, session_id: str, message: Message, turn_id: str | None = None
    ) -> StoredMessage:
        return self.append_many(session_id, [message], turn_id)[0]

    def append_many(
        self, session_id: str, messages: Iterable[Message], turn_id: str | None = None
    ) -> list[StoredMessage]:
        """Append atomically: all messages land, or none does."""
        now = time.time()
        out: list[StoredMessage] = []
        with self.conn:
            self.get(session_id)
            seq = self._next_seq(session_id)
            for message in messages:
                stored = StoredMessage(
                    message_id=new_id("m"),
                    session_id=session_id,
                    seq=seq,
                    created_at=now,
                    message=message,
                )
                self._insert(stored, turn_id)
                out.append(stored)
                seq += 1
            self.conn.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (now, session_id))
        commit_record.note_added(self.conn, len(out))
        return out

    def _next_seq(self, session_id: str) -> int:
        row = self.conn.execute(
            "SELECT coalesce(max(seq), 0) FROM messages WHERE session_id = ?", (session_id,)
        ).fetchone()
        return int(row[0]) + 1 if row else 1

    def _insert(self, stored: StoredMessage, turn_id: str | None) -> None:
        message = stored.message
        body = message.model_dump_json(exclude={"content"}, exclude_defaults=True)
        self.conn.execute(
            "INSERT INTO messages(id, session_id, seq, role, content, created_at, body, turn_id)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                stored.message_id,
                stored.session_id,
                stored.seq,
                message.role,
                message.content,
                stored.created_at,
                body,
                turn_id,
            ),
        )

    def messages(self, session_id: str, after_seq: int = 0) -> list[StoredMessage]:
        rows = self.conn.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ? AND seq > ? ORDER BY seq",
            (session_id, after_seq),
        )
        return self._read_messages(rows, session_id, whole=after_seq <= 0)

    def _read_messages(
        self, rows: Iterable[Any], session_id: str, whole: bool
    ) -> list[StoredMessage]:
        """The messages of ``rows`` (of ``session_id``; ``whole``: all of its log)."""
        return [stored_message(row) for row in rows]

    def latest(self, session_id: str, count: int = 1) -> list[StoredMessage]:
        """The newest ``count`` messages of the log, oldest first."""
        rows = self.conn.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM messages"
            " WHERE session_id = ? ORDER BY seq DESC LIMIT ?",
            (session_id, count),
        )
        return list(reversed([stored_message(row) for row in rows]))

    def message(self, session_id: str, message_id: str) -> StoredMessage | None:
        row = self.conn.execute(
            "SELECT id, session_id, seq, created_at, role, content, body FROM messages"
            " WHERE session_id = ? AND id = ?",
            (session_id, message_id),
        ).fetchone()
        return stored_message(row) if row else None

    def messages_by_id(self, session_id: str, ids: Sequence[str]) -> dict[str, StoredMessage]:
        """The messages of ``session_id`` among ``ids``, by id, in one query (an id of
        another session's message, or of none, is not in the answer)."""
        if not ids:
            return {}
        marks = ", ".join("?" * len(ids))
        rows = self.conn.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ? AND id IN ({marks})"
            " ORDER BY seq",
            (session_id, *ids),
        )
        return {s.message_id: s for s in self._read_messages(rows, session_id, whole=False)}

    def record_action(self, session_id: str, node_id: str, action: str, detail: str) -> None:
        """Audit a ledger action (pin, drop, stub, restore, …) in ``ctx_actions``."""
        with self.conn:
            self.conn.execute(
                "INSERT INTO ctx_actions(session_id, node_id, action, detail, created_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (session_id, node_id, action, detail, time.time()),
            )

    # -------------------------------------------------------------- per-session state
    def get_state(self, session_id: str, key: str, default: Any = None) -> Any:
        text = self.state_text(session_id, key)
        return json.loads(text) if text is not None else default

    def has_state(self, session_id: str, key: str) -> bool:
        return self.state_text(session_id, key) is not None

    def state_text(self, session_id: str, key: str) -> str | None:
        """A state value as the JSON text it is stored as (None: no such key)."""
        row = self.conn.execute(
            "SELECT value FROM session_state WHERE session_id = ? AND key = ?", (session_id, key)
        ).fetchone()
        return str(row[0]) if row else None

    def delete_state(self, session_id: str, key: str) -> None:
        with self.conn:
            self.conn.execute(
                "DELETE FROM session_state WHERE session_id = ? AND key = ?", (session_id, key)
            )

    def set_state(self, session_id: str, key: str, value: Any) -> None:
        with self.conn:
            self.conn.execute(
                "INSERT INTO session_state(session_id, key, value) VALUES (?, ?, ?)"
                " ON CONFLICT(session_id, key) DO UPDATE SET value = excluded.value",
                (session_id, key, json.dumps(value, sort_keys=True)),
            )


def stored_message(row: Any) -> StoredMessage:
    message_id, session_id, seq, created_at, role, content, body = row
    if body:  # the body holds everything but the content, which has its own column
        message = Message.model_validate({**json.loads(body), "content": content})
    else:  # rows written by schema v1
        message = Message(role=role, content=content)
    return StoredMessage(
        message_id=message_id,
        session_id=session_id,
        seq=seq,
        created_at=created_at,
        message=message,
    )
