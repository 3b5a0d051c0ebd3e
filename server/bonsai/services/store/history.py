"""Reading a session's log from its durable summary boundary.

A turn needs only the active path's first message (the root, folded into the
summary) and the log from the boundary's ``start_seq`` on; see
``bonsai.core.context.boundary``. :func:`read_window` returns that, or ``None``
when the boundary no longer holds (a tree operation since it was set, or its
root is gone): the caller then reads the whole log and sets it again.
"""

from __future__ import annotations

from collections.abc import Iterable

import apsw

from bonsai.core.context.context_state import HistoryBoundary
from bonsai.domain import StoredMessage
from bonsai.services.store.sessions import SessionStore


class HistoryWindow(list[StoredMessage]):
    """The root, then every logged message from ``boundary.start_seq`` on."""

    def __init__(self, messages: Iterable[StoredMessage], boundary: HistoryBoundary) -> None:
        super().__init__(messages)
        self.boundary = boundary

    def narrowed(self, boundary: HistoryBoundary) -> HistoryWindow:
        """The same window from a later start (the boundary moved forward)."""
        root = [s for s in self[:1] if s.message_id == boundary.root_id]
        rest = [s for s in self[1:] if s.seq >= boundary.start_seq]
        return HistoryWindow([*root, *rest], boundary)


def ops_mark(conn: apsw.Connection, session_id: str) -> int:
    """The newest tree operation of the session (0 when there is none)."""
    row = conn.execute(
        "SELECT coalesce(max(id), 0) FROM tree_ops WHERE session_id = ?", (session_id,)
    ).fetchone()
    return int(row[0]) if row else 0


def read_window(
    store: SessionStore, session_id: str, boundary: HistoryBoundary
) -> HistoryWindow | None:
    """The window of ``boundary``, or ``None`` when it no longer holds."""
    if ops_mark(store.conn, session_id) != boundary.ops_mark:
        return None
    root = store.message(session_id, boundary.root_id)
    if root is None:
        return None
    rest = store.messages(session_id, after_seq=boundary.start_seq - 1)
    return HistoryWindow([root, *rest], boundary)
