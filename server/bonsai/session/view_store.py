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
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import apsw

from bonsai.domain import StoredMessage
from bonsai.services.store.sessions import SessionStore, stored_message

SESSIONS_KEPT = 16  # the sessions a client has open, streaming or watched


@dataclass(frozen=True, slots=True)
class _Read:
    row: tuple[object, ...]  # every column but the content (the message holds it)
    stored: StoredMessage

    def same(self, row: tuple[object, ...]) -> bool:
        return self.row == _without_content(row) and self.stored.message.content == row[5]


def _without_content(row: tuple[object, ...]) -> tuple[object, ...]:
    return row[:5] + row[6:]


class MessageCache:
    """Per session: message id → the row last read and the message made of it (for the
    ``limit`` sessions read last)."""

    def __init__(self, limit: int = SESSIONS_KEPT) -> None:
        self.limit = limit
        self._sessions: OrderedDict[str, dict[str, _Read]] = OrderedDict()

    def messages(
        self, rows: list[tuple[object, ...]], session_id: str, whole: bool
    ) -> list[StoredMessage]:
        kept = self._sessions.get(session_id, {})
        out: list[StoredMessage] = []
        seen: dict[str, _Read] = {}
        for row in rows:
            read = kept.get(str(row[0]))
            if read is None or not read.same(row):
                read = _Read(_without_content(row), stored_message(row))
            seen[str(row[0])] = read
            out.append(read.stored)
        # a whole read replaces what is kept (a message gone from the log is let go)
        self._sessions[session_id] = seen if whole else {**kept, **seen}
        self._sessions.move_to_end(session_id)
        while len(self._sessions) > self.limit:
            self._sessions.popitem(last=False)
        return out

    def forget(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)


class CachedStore(SessionStore):
    """A :class:`SessionStore` whose message reads go through a :class:`MessageCache`
    (the thread's own: the worker's, or the loop's)."""

    def __init__(self, conn: apsw.Connection, cache: MessageCache) -> None:
        super().__init__(conn)
        self.cache = cache

    def _read_messages(
        self, rows: Iterable[Any], session_id: str, whole: bool
    ) -> list[StoredMessage]:
        return self.cache.messages([tuple(r) for r in rows], session_id, whole)
