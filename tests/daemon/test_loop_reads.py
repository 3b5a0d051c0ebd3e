"""A poll of a session that did not move makes no SQLite statement on the event loop.

``bonsai/ctx/get`` is called as the wire calls it, on a daemon holding one session of
20 messages; the daemon's connection counts every statement it runs. The write
versions are counters in memory (``session.versions``) and the loop's store keeps the
session row and state reads while its session's version stands
(``session.loop_store``); any write, a rolled-back one too, is seen by the next read.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, cast

import apsw
import pytest

import bonsai.daemon.handlers  # noqa: F401  (registers the handlers)
from bonsai.daemon.rpc import HANDLERS, Ctx, encoded_response
from bonsai.daemon.state import Daemon
from bonsai.domain import Message
from bonsai.protocol.methods import BY_NAME
from bonsai.services.store.db import open_database
from bonsai.services.store.sessions import SessionStore
from bonsai.session import versions
from bonsai.session.loop_store import LoopStore
from bonsai.session.view_store import MessageCache
from bonsai.session.views import Encoded


@contextlib.contextmanager
def counted(conn: apsw.Connection) -> Iterator[list[str]]:
    """Every statement ``conn`` runs meanwhile."""
    statements: list[str] = []

    def trace(cursor: apsw.Cursor, sql: str, bindings: Any) -> bool:
        statements.append(sql)
        return True

    conn.exec_trace = trace
    try:
        yield statements
    finally:
        conn.exec_trace = None


@pytest.fixture
async def daemon(tmp_path: Path) -> AsyncIterator[Daemon]:
    db_path = tmp_path / "bonsai.db"
    made = Daemon(tmp_path, open_database(db_path), db_path)
    yield made
    made.views.close()  # on the loop: the view process's pipes are the loop's
    made.db.close()


async def _get(daemon: Daemon, sid: str) -> dict[str, Any]:
    ctx = Ctx(daemon, cast(Any, None), cast(Any, None))
    params = BY_NAME["bonsai/ctx/get"].params.model_validate({"sessionId": sid, "view": "ledger"})
    answer = await HANDLERS["bonsai/ctx/get"](ctx, params)
    return cast(dict[str, Any], json.loads(answer.body))  # type: ignore[union-attr]


async def test_a_kept_ctx_get_runs_no_statement_on_the_loop(daemon: Daemon, tmp_path: Path) -> None:
    workspace = tmp_path / "project"
    workspace.mkdir()
    sid = daemon.store.create(str(workspace)).session_id
    for n in range(20):
        role = "user" if n % 2 == 0 else "assistant"
        daemon.store.append(sid, Message(role=role, content=f"message {n} " * 50))
    first = await _get(daemon, sid)  # computed on the worker: the baseline taken, stored
    assert len(first["nodes"]) >= 20
    await _get(daemon, sid)
    with counted(daemon.db) as statements:
        for _ in range(5):
            assert await _get(daemon, sid) == first
    assert statements == [], "a poll of a session that did not move reads nothing"

    daemon.store.append(sid, Message(role="user", content="one more"))
    with counted(daemon.db) as statements:
        moved = await _get(daemon, sid)
    assert len(moved["nodes"]) == len(first["nodes"]) + 1, "the write is in the next answer"
    assert statements, "a moved session is read again"


async def test_the_loop_store_answers_every_write_at_once(daemon: Daemon, tmp_path: Path) -> None:
    store = daemon.store
    assert isinstance(store, LoopStore)
    sid = store.create(str(tmp_path)).session_id
    store.set_state(sid, "todos", ["a"])
    assert store.get_state(sid, "todos") == ["a"]
    reads = store.reads
    assert store.get_state(sid, "todos") == ["a"] and store.reads == reads, "kept"
    store.get_state(sid, "todos").append("changed by a caller")
    assert store.get_state(sid, "todos") == ["a"], "each caller decodes its own value"

    store.set_state(sid, "todos", ["b"])
    assert store.get_state(sid, "todos") == ["b"]
    assert store.get(sid).message_count == 0
    store.append(sid, Message(role="user", content="hello"))
    assert store.get(sid).message_count == 1

    with contextlib.suppress(RuntimeError), daemon.db:  # a transaction rolled back
        store.set_state(sid, "todos", ["rolled back"])
        assert store.get_state(sid, "todos") == ["rolled back"]
        raise RuntimeError("abandon the transaction")
    assert store.get_state(sid, "todos") == ["b"], "what the rollback restored"


def test_a_write_by_another_connection_is_seen_within_verify_s(tmp_path: Path) -> None:
    db_path = tmp_path / "bonsai.db"
    conn = open_database(db_path)
    versions.install(conn)
    now = [0.0]
    store = LoopStore(conn, MessageCache(), verify_s=1.0, clock=lambda: now[0])
    sid = store.create(str(tmp_path)).session_id
    store.set_state(sid, "k", 1)
    assert store.get_state(sid, "k") == 1
    other = open_database(db_path)  # another process, say: its writes are not counted
    other.execute("UPDATE session_state SET value = '2' WHERE session_id = ?", (sid,))
    assert store.get_state(sid, "k") == 1, "kept while its version stands"
    now[0] = 1.5
    assert store.get_state(sid, "k") == 2, "read again after verify_s"
    other.close()
    conn.close()


async def test_the_versions_are_read_without_a_statement(daemon: Daemon, tmp_path: Path) -> None:
    sid = daemon.store.create(str(tmp_path)).session_id
    with counted(daemon.db) as statements:
        assert versions.version(daemon.db, sid)[0] > 0
        assert versions.edits(daemon.db, sid) == 0
    assert statements == []
    uncounted = apsw.Connection(":memory:")
    with pytest.raises(RuntimeError, match="install"):
        versions.version(uncounted, sid)


def test_an_encoded_answer_is_framed_with_its_exact_length() -> None:
    for msg_id in (7, "req-é", 2**40):
        result = Encoded(b'{"view":"ledger","nodes":[' + b'{"id":"n"},' * 5000 + b'{"id":"z"}]}')
        frame = encoded_response(msg_id, result)
        head, _, body = frame.partition(b"\r\n\r\n")
        assert head == b"Content-Length: %d" % len(body)
        assert json.loads(body) == {"jsonrpc": "2.0", "id": msg_id, "result": result.dump()}


def test_a_turns_history_on_the_loop_is_read_as_it_grew(daemon: Daemon, tmp_path: Path) -> None:
    """The loop's own connection counts every change of a message row, so a turn's
    history is the kept log plus the rows appended since: never a stale row."""
    store, db = daemon.store, daemon.db
    assert isinstance(store, LoopStore)
    sid = store.create(str(tmp_path)).session_id
    for n in range(6):
        store.append(sid, Message(role="user" if n % 2 == 0 else "assistant", content=f"m{n}"))
    first = store.messages(sid)
    whole = store.cache.whole_reads
    store.append_many(sid, [Message(role="user", content="next")])
    grown = store.messages(sid)
    assert grown == SessionStore(db).messages(sid) and grown[0] is first[0]
    assert store.cache.whole_reads == whole, "only the appended row was read"

    db.execute("UPDATE messages SET content = 'edited' WHERE id = ?", (first[1].message_id,))
    edited = store.messages(sid)
    assert edited[1].message.content == "edited", "an edit through the loop is seen at once"
    assert store.cache.whole_reads == whole + 1

    with contextlib.suppress(RuntimeError), db:  # rows seen inside a rolled-back transaction
        store.append(sid, Message(role="user", content="rolled back"))
        assert store.messages(sid)[-1].message.content == "rolled back"
        raise RuntimeError("abandon the transaction")
    store.append(sid, Message(role="user", content="kept"))  # the same seq again
    after = store.messages(sid)
    assert [s.message.content for s in after][-2:] == ["next", "kept"]
    assert after == SessionStore(db).messages(sid)
