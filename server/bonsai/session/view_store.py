"""The session store as the view worker reads it: a message read again unchanged is the
same object, so a view of a session that grew costs its new messages only.

Reading a row back into a :class:`StoredMessage` (JSON, then pydantic) is most of
what reading a long log costs; and the assembly memos check a message by identity
first, by equality (slow on long texts) only when it is a new object. The worker
keeps, per session, the messages of its last read with the row each came from; a
row read again exactly as it was is that message again. Any difference (an edit,
a repair, a new body) reads the row afresh, so a view never sees a stale message.
Used by one thread (the view worker) only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import apsw

from bonsai.domain import StoredMessage
from bonsai.services.store.sessions import SessionStore, stored_message


@dataclass(frozen=True, slots=True)
class _Read:
    row: tuple[object, ...]  # every column but the content (the message holds it)
    stored: StoredMessage

    def same(self, row: tuple[object, ...]) -> bool:
        return self.row == _without_content(row) and self.stored.message.content == row[5]


def _without_content(row: tuple[object, ...]) -> tuple[object, ...]:
    return row[:5] + row[6:]


class MessageCache:
    """Per session: message id → the row last read and the message made of it."""

    def __init__(self) -> None:
        self._sessions: dict[str, dict[str, _Read]] = {}

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
        return out

    def forget(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)


class ViewStore(SessionStore):
    """A :class:`SessionStore` on the worker's connection whose message reads go
    through the worker's :class:`MessageCache`."""

    def __init__(self, conn: apsw.Connection, cache: MessageCache) -> None:
        super().__init__(conn)
        self.cache = cache

    def _read_messages(
        self, rows: Iterable[Any], session_id: str, whole: bool
    ) -> list[StoredMessage]:
        return self.cache.messages([tuple(r) for r in rows], session_id, whole)
