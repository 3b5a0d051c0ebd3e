"""The session store whose reads keep their messages: a message read again unchanged is
the same object, so a view, or a turn's request, of a session that grew costs its new
messages only.

Reading a row back into a :class:`StoredMessage` (JSON, then pydantic) is most of
what reading a long log costs; and the assembly memos check a message by identity
first, by equality (slow on long texts) only when it is a new object. The worker
keeps, per session, the messages of its last read with the row each came from; a
row read again exactly as it was is that message again. Any difference (an edit,
a repair, a new body) reads the row afresh, so a read never sees a stale message
(messages are frozen: nobody can change one that is kept). One cache per thread:
the view worker has its own, the loop's store (``Daemon.store``) its own. The
messages of the ``SESSIONS_KEPT`` sessions read last are kept.

A view that knows its session's log has only grown since the worker's last whole
read (the session's edits count, :func:`bonsai.session.versions.edits`, is the one
that read saw) reads the rows appended since then and nothing else: a moved view of
a long log no longer copies every row's content out of SQLite. A write through
another connection (another process) is not counted, so the whole log is read
again at least every ``VERIFY_S``, the time a kept view is served without a look
at the database either (``bonsai.session.views.FRESH_S``).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import apsw

from bonsai.domain import StoredMessage
from bonsai.services.store.sessions import MESSAGE_COLUMNS, SessionStore, stored_message

SESSIONS_KEPT = 16  # the sessions a client has open, streaming or watched
VERIFY_S = 1.0
_GROWN = f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ? AND seq > ? ORDER BY seq"
_BEFORE = "SELECT count(*) FROM messages WHERE session_id = ? AND seq <= ?"


@dataclass(frozen=True, slots=True)
class _Read:
    row: tuple[object, ...]  # every column but the content (the message holds it)
    stored: StoredMessage

    def same(self, row: tuple[object, ...]) -> bool:
        return self.row == _without_content(row) and self.stored.message.content == row[5]


def _without_content(row: tuple[object, ...]) -> tuple[object, ...]:
    return row[:5] + row[6:]


@dataclass
class _Log:
    """What one session's last whole read found, and when."""

    reads: dict[str, _Read] = field(default_factory=dict)
    order: list[StoredMessage] = field(default_factory=list)  # the whole log, in seq order
    last_seq: int = 0
    edits: int | None = None  # the session's edits count that read saw (None: unknown)
    at: float = float("-inf")  # when it was read whole (-inf: the order is not to be used)


class MessageCache:
    """Per session: message id → the row last read and the message made of it (for the
    ``limit`` sessions read last), and the whole log as last read."""

    def __init__(
        self,
        limit: int = SESSIONS_KEPT,
        verify_s: float = VERIFY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit, self.verify_s, self.clock = limit, verify_s, clock
        self._sessions: OrderedDict[str, _Log] = OrderedDict()
        self.whole_reads = 0  # how many times a log was read whole (tests and benches)

    def messages(
        self,
        rows: list[tuple[object, ...]],
        session_id: str,
        whole: bool,
        edits: int | None = None,
    ) -> list[StoredMessage]:
        log = self._sessions.get(session_id) or _Log()
        out: list[StoredMessage] = []
        seen: dict[str, _Read] = {}
        changed = False
        for row in rows:
            read = log.reads.get(str(row[0]))
            if read is None or not read.same(row):
                changed = changed or read is not None
                read = _Read(_without_content(row), stored_message(row))
            seen[str(row[0])] = read
            out.append(read.stored)
        if whole:  # a whole read replaces what is kept (a message gone is let go)
            self.whole_reads += 1
            last = out[-1].seq if out else 0
            log = _Log(seen, list(out), last, edits, self.clock())
        else:
            log.reads = {**log.reads, **seen}
            if changed:  # a kept row is not what the table holds: read it all next time
                log.at = float("-inf")
        self._keep(session_id, log)
        return out

    def grown(
        self, conn: apsw.Connection, session_id: str, edits: int
    ) -> list[StoredMessage] | None:
        """The whole log, reading only the rows after the last whole read, when the
        session's ``edits`` count is the one that read saw, the rows it read are all
        still there, and it is at most ``verify_s`` old; else None (read it whole)."""
        log = self._sessions.get(session_id)
        if log is None or log.edits != edits or self.clock() - log.at >= self.verify_s:
            return None
        before = conn.execute(_BEFORE, (session_id, log.last_seq)).fetchone()
        if before is None or before[0] != len(log.order):
            return None
        for row in conn.execute(_GROWN, (session_id, log.last_seq)):
            stored = stored_message(row)
            log.reads[stored.message_id] = _Read(_without_content(tuple(row)), stored)
            log.order.append(stored)
            log.last_seq = stored.seq
        self._keep(session_id, log)
        return list(log.order)

    def _keep(self, session_id: str, log: _Log) -> None:
        self._sessions[session_id] = log
        self._sessions.move_to_end(session_id)
        while len(self._sessions) > self.limit:
            self._sessions.popitem(last=False)

    def forget(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)


class CachedStore(SessionStore):
    """A :class:`SessionStore` whose message reads go through a :class:`MessageCache`
    (the thread's own: the worker's, or the loop's)."""

    def __init__(
        self, conn: apsw.Connection, cache: MessageCache, edits: dict[str, int] | None = None
    ) -> None:
        super().__init__(conn)
        self.cache = cache
        # per session, its edits count as the writer's connection told it before this
        # snapshot (a view's): the log may then be read as grown
        self.edits = edits or {}

    def messages(self, session_id: str, after_seq: int = 0) -> list[StoredMessage]:
        edits = self.edits.get(session_id)
        if after_seq <= 0 and edits is not None:
            grown = self.cache.grown(self.conn, session_id, edits)
            if grown is not None:
                return grown
        return super().messages(session_id, after_seq)

    def _read_messages(
        self, rows: Iterable[Any], session_id: str, whole: bool
    ) -> list[StoredMessage]:
        edits = self.edits.get(session_id) if whole else None
        return self.cache.messages([tuple(r) for r in rows], session_id, whole, edits)
