"""The loop's session store: what a poll reads of a session, kept while nothing moved.

A ``bonsai/ctx/get`` whose view is kept still reads, on the event loop, the session's
row (its workspace, for the settings) and two state values (the git baseline is
there; the provider the session chose). Each is one SQLite statement. Through the
daemon's connection every write to a session moves its version
(:mod:`bonsai.session.versions`, counters in memory), so while the version stands
those reads are answered from memory: a poll of a session that did not move makes no
SQLite statement on the loop.

A write by another process is not counted, as for the message cache: a kept read is
used for at most ``VERIFY_S`` (the time a kept view is served without a look at the
database, ``bonsai.session.views.FRESH_S``). A state value is kept as its JSON text
and decoded on each read, so no caller gets an object another one may change. A
read inside an open transaction is not kept (a write in it has moved the version,
and a rollback would not move it back).

The log is read as it grew: this connection counts every change or deletion of a
message row (the session's edits count, :func:`bonsai.session.versions.edits`), so
while that count stands since the last whole read, a turn's history is the kept log
and the rows appended since (``MessageCache.grown``: their number checked, at most
``VERIFY_S`` after the last whole read), not every row read again and compared. Inside
an open transaction the log is read whole and the read is not trusted later (a
rollback would take back rows it saw).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

import apsw

from bonsai.domain import StoredMessage
from bonsai.services.store.sessions import SessionRow, SessionStore
from bonsai.session import versions
from bonsai.session.view_store import VERIFY_S, CachedStore, MessageCache

KEPT = 256  # (session, what) reads kept, the oldest dropped first
_ROW = "\0row"  # the session row's key among its state keys (no state key starts with NUL)


class LoopStore(CachedStore):
    """:class:`CachedStore` whose session-row and state reads are kept per write version."""

    def __init__(
        self,
        conn: apsw.Connection,
        cache: MessageCache,
        verify_s: float = VERIFY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(conn, cache)
        self.verify_s, self.clock = verify_s, clock
        self._kept: OrderedDict[tuple[str, str], tuple[tuple[int, int], float, Any]] = OrderedDict()
        self.reads = 0  # reads that went to SQLite (tests and benches)

    def _keep(self, session_id: str, what: str, read: Callable[[], Any]) -> Any:
        where = (session_id, what)
        stamp = versions.version(self.conn, session_id)
        now = self.clock()
        kept = self._kept.get(where)
        if kept is not None and kept[0] == stamp and now - kept[1] < self.verify_s:
            return kept[2]
        self.reads += 1
        value = read()  # raises for an unknown session: nothing kept
        if self.conn.in_transaction:  # it may yet be rolled back: not kept
            return value
        self._kept[where] = (stamp, now, value)
        self._kept.move_to_end(where)
        while len(self._kept) > KEPT:
            self._kept.popitem(last=False)
        return value

    def messages(self, session_id: str, after_seq: int = 0) -> list[StoredMessage]:
        if after_seq <= 0 and not self.conn.in_transaction:
            edits = versions.edits(self.conn, session_id)
            grown = self.cache.grown(self.conn, session_id, edits)
            if grown is not None:
                return grown
        return SessionStore.messages(self, session_id, after_seq)

    def _read_messages(
        self, rows: Iterable[Any], session_id: str, whole: bool
    ) -> list[StoredMessage]:
        trusted = whole and not self.conn.in_transaction  # the edits count it was read at
        edits = versions.edits(self.conn, session_id) if trusted else None
        return self.cache.messages([tuple(r) for r in rows], session_id, whole, edits)

    def get(self, session_id: str) -> SessionRow:
        read = super().get
        row: SessionRow = self._keep(session_id, _ROW, lambda: read(session_id))
        return row  # frozen: shared safely

    def state_text(self, session_id: str, key: str) -> str | None:
        read = super().state_text
        text: str | None = self._keep(session_id, key, lambda: read(session_id, key))
        return text
