"""The active path of a session's tree, carried on from the last one while the log grows.

Deriving the tree replays the whole log and its operations on every view and every
turn's request. Most of the time the log has only grown since: the same messages
(the same objects, from the store's message cache), the same operations, none of
them placed after the new messages, the same messages excluded among the old ones.
Then the tree the last derivation made is the tree of the old messages, and
attaching the new ones to it gives what :func:`derive` of the whole log gives
(``tests/session/test_active_path.py`` compares the two over random logs, forks,
jumps, hides and cancelled turns). Anything else derives the tree afresh. One
cache per thread (the loop's, the view worker's); the ``SESSIONS_KEPT`` sessions
asked for last are kept.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

import apsw

from bonsai.core.history.tree import Tree, TreeOp, attach, derive
from bonsai.domain import StoredMessage
from bonsai.services.store.history import HistoryWindow
from bonsai.services.store.tree import TreeStore
from bonsai.services.store.tree import active_history as derived_active_history

SESSIONS_KEPT = 16


@dataclass
class _Derived:
    ops: tuple[TreeOp, ...]
    log: list[StoredMessage]  # the messages the tree was made of, in log order
    ids: dict[str, StoredMessage]
    excluded: frozenset[str]  # the excluded among them
    tree: Tree


class _Kept(threading.local):
    def __init__(self) -> None:
        self.sessions: OrderedDict[str, _Derived] = OrderedDict()
        self.derived = 0  # how many trees were derived from the whole log (tests)


_kept = _Kept()


def active_history(
    conn: apsw.Connection, session_id: str, history: list[StoredMessage]
) -> list[StoredMessage]:
    """The messages of the active path (root → active leaf), in path order: what
    :func:`bonsai.services.store.tree.active_history` gives, carried on when it can."""
    if isinstance(history, HistoryWindow):
        return derived_active_history(conn, session_id, history)
    store = TreeStore(conn)
    ops = tuple(store.ops(session_id))
    unsent = {s.message_id for s in history if s.message.status != "complete"}
    excluded = store.cancelled(session_id) | unsent
    sessions = _kept.sessions
    kept = sessions.pop(session_id, None)  # put back only once it is true again
    if kept is None or not _grown(kept, ops, history, excluded):
        _kept.derived += 1
        kept = _fresh(ops, history, excluded)
    else:
        for stored in history[len(kept.log) :]:
            if stored.message_id not in excluded:
                attach(kept.tree, stored)
            kept.log.append(stored)
            kept.ids[stored.message_id] = stored
        kept.excluded = frozenset(e for e in excluded if e in kept.ids)
    sessions[session_id] = kept
    while len(sessions) > SESSIONS_KEPT:
        sessions.popitem(last=False)
    return [kept.ids[node_id] for node_id in kept.tree.active_path()]


def _fresh(ops: tuple[TreeOp, ...], history: list[StoredMessage], excluded: set[str]) -> _Derived:
    tree = derive(history, ops, excluded)
    ids = {s.message_id: s for s in history}
    return _Derived(ops, list(history), ids, frozenset(e for e in excluded if e in ids), tree)


def _grown(
    kept: _Derived, ops: tuple[TreeOp, ...], history: list[StoredMessage], excluded: set[str]
) -> bool:
    """Is ``history`` the kept log and new messages, with nothing else changed?"""
    old = kept.log
    if ops != kept.ops or len(history) < len(old):
        return False
    if any(a is not b for a, b in zip(old, history, strict=False)):
        return False
    if frozenset(e for e in excluded if e in kept.ids) != kept.excluded:
        return False  # a turn cancelled since, an old reply no longer complete
    new = history[len(old) :]
    # an operation placed at or after a new message would replay between them
    return not new or all(op.after_seq < new[0].seq for op in ops)


def derived() -> int:
    """How many trees this thread derived from a whole log (tests and benches)."""
    return _kept.derived
