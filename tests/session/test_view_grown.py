"""A view of a log that only grew reads the rows appended since its last read, and
never shows a row as it was once the row changed.

The daemon's connection counts, per session, every update or delete of a message
row (``versions.edits``). While that count stands and the worker's last whole read
is at most ``VERIFY_S`` old, a view reads only the new rows; an edit, a row gone,
or time passing reads the whole log again.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from bonsai.daemon.state import Daemon
from bonsai.domain import Message
from bonsai.services.store.db import open_database
from bonsai.services.store.sessions import SessionStore
from bonsai.session import versions
from bonsai.session.host import Host
from bonsai.session.view_store import CachedStore, MessageCache


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _contents(store: SessionStore, sid: str) -> list[str]:
    return [s.message.content for s in store.messages(sid)]


def test_a_grown_log_is_read_from_its_new_rows_until_a_row_changes_or_time_passes(
    tmp_path: Path,
) -> None:
    db_path = tmp_path / "bonsai.db"
    daemon = Daemon(tmp_path, open_database(db_path), db_path)  # installs the counters
    db, store = daemon.db, daemon.store
    sid = store.create(str(tmp_path)).session_id
    for text in ("one", "two"):
        store.append(sid, Message(role="user", content=text))
    clock = Clock()
    cache = MessageCache(verify_s=1.0, clock=clock)

    def view() -> CachedStore:
        return CachedStore(db, cache, {sid: versions.edits(db, sid)})

    first = view().messages(sid)
    assert cache.whole_reads == 1
    store.append(sid, Message(role="assistant", content="three"))
    grown = view().messages(sid)
    assert [s.message.content for s in grown] == ["one", "two", "three"]
    assert cache.whole_reads == 1, "only the new row was read"
    assert grown[0] is first[0] and grown == SessionStore(db).messages(sid)

    # a row rewritten in place through the daemon's connection: its edits count moves
    db.execute("UPDATE messages SET content = 'TWO' WHERE session_id = ? AND seq = ?", (sid, 2))
    assert _contents(view(), sid) == ["one", "TWO", "three"]
    assert cache.whole_reads == 2

    # a write the counters do not see (another connection): read whole after verify_s
    other = open_database(db_path)
    other.execute("UPDATE messages SET content = 'ONE' WHERE session_id = ? AND seq = ?", (sid, 1))
    clock.now += 0.5
    assert _contents(view(), sid)[0] == "one", "within verify_s the rows read are kept"
    clock.now += 0.6
    assert _contents(view(), sid) == ["ONE", "TWO", "three"]
    # a row gone behind the counters' back: the count of the rows read differs
    other.execute("DELETE FROM messages WHERE session_id = ? AND seq = ?", (sid, 1))
    store.append(sid, Message(role="user", content="four"))
    assert _contents(view(), sid) == ["TWO", "three", "four"]
    # without an edits count (a plain store of the cache) the log is always read whole
    reads = cache.whole_reads
    CachedStore(db, cache).messages(sid)
    assert cache.whole_reads == reads + 1
    other.close()
    daemon.db.close()


async def test_a_row_changed_while_a_view_computes_is_in_the_view_it_answers(
    tmp_path: Path,
) -> None:
    db_path = tmp_path / "bonsai.db"
    daemon = Daemon(tmp_path, open_database(db_path), db_path)
    sid = daemon.store.create(str(tmp_path)).session_id
    daemon.store.append(sid, Message(role="user", content="before"))

    def read(host: Host) -> list[str]:
        return [s.message.content for s in host.store.messages(sid)]

    assert await daemon.views.run(daemon, sid, read) == ["before"]
    daemon.store.append(sid, Message(role="assistant", content="grown"))
    loop = asyncio.get_running_loop()
    edited = threading.Event()

    def edit() -> None:
        daemon.db.execute("UPDATE messages SET content = 'after' WHERE seq = 1")
        edited.set()

    def racing(host: Host) -> list[str]:
        seen = read(host)  # the snapshot is taken: the edit below is not in it
        if not edited.is_set():
            loop.call_soon_threadsafe(edit)
            assert edited.wait(10)
        return seen

    assert await daemon.views.run(daemon, sid, racing) == ["after", "grown"]
    daemon.views.close()
    daemon.db.close()
