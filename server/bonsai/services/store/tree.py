"""Tree operations as their own rows, and the tree of a session derived from its log.

The log (``messages``) is never touched: the conversation tree is the log plus
the rows of ``tree_ops``, replayed by ``bonsai.core.history.tree.derive``. Messages of
cancelled turns and replies that never completed are not tree nodes.
"""

from __future__ import annotations

import time

import apsw

from bonsai.core.history.tree import Tree, TreeOp, derive
from bonsai.domain import StoredMessage
from bonsai.services.store.history import HistoryWindow


class TreeStore:
    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn

    def add(self, session_id: str, op: TreeOp) -> None:
        with self.conn:
            self.conn.execute(
                "INSERT INTO tree_ops(session_id, op, node_id, parent_id, after_seq, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (session_id, op.kind, op.node_id, op.parent_id, op.after_seq, time.time()),
            )

    def ops(self, session_id: str) -> list[TreeOp]:
        rows = self.conn.execute(
            "SELECT op, node_id, parent_id, after_seq FROM tree_ops WHERE session_id = ?"
            " ORDER BY id",
            (session_id,),
        )
        return [TreeOp(kind=r[0], node_id=r[1], parent_id=r[2], after_seq=r[3]) for r in rows]

    def cancelled(self, session_id: str, since_seq: int = 0) -> set[str]:
        """Ids of messages (from ``since_seq`` on) written by turns the user cancelled."""
        rows = self.conn.execute(
            "SELECT m.id FROM messages m JOIN turns t"
            " ON t.session_id = m.session_id AND t.turn_id = m.turn_id"
            " WHERE m.session_id = ? AND m.seq >= ? AND t.status = 'cancelled'",
            (session_id, since_seq),
        )
        return {str(r[0]) for r in rows}


def load_tree(conn: apsw.Connection, session_id: str, history: list[StoredMessage]) -> Tree:
    """The session's tree from ``history`` (its whole log) and its recorded operations.

    A :class:`HistoryWindow` gives the tree of its window: the root, then the log
    from the boundary on (no operation has been recorded since the boundary was
    set, or the window would not have been read)."""
    store = TreeStore(conn)
    unsent = {s.message_id for s in history if s.message.status != "complete"}
    if isinstance(history, HistoryWindow):
        cancelled = store.cancelled(session_id, history.boundary.start_seq)
        return derive(history, [], cancelled | unsent)
    return derive(history, store.ops(session_id), store.cancelled(session_id) | unsent)


def active_history(
    conn: apsw.Connection, session_id: str, history: list[StoredMessage]
) -> list[StoredMessage]:
    """The messages of the active path (root → active leaf), in path order."""
    tree = load_tree(conn, session_id, history)
    by_id = {s.message_id: s for s in history}
    return [by_id[node_id] for node_id in tree.active_path()]
