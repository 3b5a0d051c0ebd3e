"""Read-only views: computed off the event loop over a snapshot, kept while still true."""

from __future__ import annotations

import threading
from pathlib import Path

import apsw
import pytest

from bonsai.daemon.state import Daemon
from bonsai.domain import Message
from bonsai.services.store.db import open_database
from bonsai.session import versions
from bonsai.session.host import Host


def _daemon(tmp_path: Path) -> Daemon:
    db_path = tmp_path / "bonsai.db"
    return Daemon(tmp_path, open_database(db_path), db_path)


def test_a_write_moves_the_version_of_its_session_only(tmp_path: Path) -> None:
    daemon = _daemon(tmp_path)
    a = daemon.store.create(str(tmp_path)).session_id
    b = daemon.store.create(str(tmp_path)).session_id
    before_a, before_b = versions.version(daemon.db, a), versions.version(daemon.db, b)
    daemon.store.append(a, Message(role="user", content="hello"))
    assert versions.version(daemon.db, a)[0] > before_a[0]
    assert versions.version(daemon.db, b) == before_b, "another session's views stay true"
    daemon.store.set_state(b, "todos", [])
    assert versions.version(daemon.db, b)[0] > before_b[0]
    daemon.db.close()


async def test_views_run_off_the_loop_and_are_kept_until_their_session_moves(
    tmp_path: Path,
) -> None:
    daemon = _daemon(tmp_path)
    sid = daemon.store.create(str(tmp_path)).session_id
    other = daemon.store.create(str(tmp_path)).session_id
    daemon.store.append(sid, Message(role="user", content="first"))
    loop_thread = threading.get_ident()
    seen: list[tuple[int, int]] = []

    def count(host: Host) -> int:
        seen.append((threading.get_ident(), len(host.store.messages(sid))))
        return len(host.store.messages(sid))

    assert await daemon.views.run(daemon, sid, count, key="count") == 1
    assert seen[0][0] != loop_thread, "computed on the view worker"
    assert await daemon.views.run(daemon, sid, count, key="count") == 1
    assert len(seen) == 1, "nothing moved: the kept view is served"
    daemon.store.append(other, Message(role="user", content="elsewhere"))
    assert await daemon.views.run(daemon, sid, count, key="count") == 1
    assert len(seen) == 1, "a write to another session keeps this view"
    daemon.store.append(sid, Message(role="assistant", content="second"))
    assert await daemon.views.run(daemon, sid, count, key="count") == 2, "the write is seen"
    assert len(seen) == 2
    daemon.views.close()
    daemon.db.close()


async def test_a_view_cannot_write_the_log(tmp_path: Path) -> None:
    daemon = _daemon(tmp_path)
    sid = daemon.store.create(str(tmp_path)).session_id

    def sneak(host: Host) -> None:
        host.store.append(sid, Message(role="user", content="written by a read"))

    with pytest.raises(apsw.ReadOnlyError):
        await daemon.views.run(daemon, sid, sneak)
    assert daemon.store.messages(sid) == [], "nothing was stored"
    daemon.views.close()
    daemon.db.close()
