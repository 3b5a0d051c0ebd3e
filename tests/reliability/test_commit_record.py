"""The commit record never exceeds what the database holds, and recovery tells the truth.

Store-level (a real SQLite file): appends raise the record once their commit
lands (also inside an outer transaction, and not at all when it rolls back),
a deletion lowers it before it commits, and the record survives a reopen. After
a crash, a tool call recorded as started reads "outcome unknown" with its
command; one that never started reads "not run".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bonsai.domain import Message, ToolCall
from bonsai.services.store import commit_record
from bonsai.services.store.db import open_database
from bonsai.services.store.health import DatabaseDamaged, verify_committed
from bonsai.services.store.sessions import SessionStore
from bonsai.services.store.turns import NOT_RUN, ToolRuns, TurnStore, recover_after_crash


def _open(tmp_path: Path):  # type: ignore[no-untyped-def]
    db = tmp_path / "bonsai.db"
    conn = open_database(db)
    record = commit_record.attach(conn, db)
    return db, conn, record, SessionStore(conn)


def test_the_record_follows_commits_and_never_exceeds_the_database(tmp_path: Path) -> None:
    db, conn, record, store = _open(tmp_path)
    sid = store.create("/ws").session_id
    store.append_many(sid, [Message(role="user", content=str(i)) for i in range(3)])
    assert record.messages == 3
    with conn:  # an outer transaction: counted when it commits
        store.append(sid, Message(role="user", content="inner"))
        assert record.messages == 3
    assert record.messages == 4
    with pytest.raises(RuntimeError), conn:  # rolled back: never counted
        store.append(sid, Message(role="user", content="lost"))
        raise RuntimeError
    assert record.messages == 4 == commit_record.count_messages(conn)
    other = store.create("/ws").session_id
    store.append(other, Message(role="user", content="x"))
    store.delete(sid)
    assert record.messages == 1 == commit_record.count_messages(conn)
    commit_record.detach(conn)
    conn.close()
    assert commit_record.read_record(db) is not None
    assert verify_committed(db).messages == 1


def test_fewer_messages_than_recorded_is_refused(tmp_path: Path) -> None:
    db, conn, _, store = _open(tmp_path)
    sid = store.create("/ws").session_id
    store.append_many(sid, [Message(role="user", content=str(i)) for i in range(5)])
    commit_record.detach(conn)
    conn.execute("DELETE FROM messages WHERE seq > 2")  # behind the record's back
    conn.close()
    with pytest.raises(DatabaseDamaged, match="holds 2 messages but 5 were acknowledged"):
        verify_committed(db)


def test_recovery_says_outcome_unknown_only_for_a_started_call(tmp_path: Path) -> None:
    _, conn, _, store = _open(tmp_path)
    sid = store.create("/ws").session_id
    turns = TurnStore(conn)
    turns.start(sid, "t1")
    started = ToolCall(id="c-started", name="bash", arguments='{"command": "make deploy"}')
    waiting = ToolCall(id="c-waiting", name="bash", arguments='{"command": "rm -rf build"}')
    store.append(sid, Message(role="assistant", content="", tool_calls=[started, waiting]), "t1")
    ToolRuns(conn).starting(sid, "c-started", "$ make deploy")
    recover_after_crash(conn)  # the daemon died with the first call running
    results = {m.message.tool_call_id: m.message.content for m in store.messages(sid)[1:]}
    assert "outcome unknown: the daemon stopped while it ran" in results["c-started"]
    assert "$ make deploy" in results["c-started"]
    assert results["c-waiting"] == NOT_RUN
    assert ToolRuns(conn).all() == {}, "the record of started calls is cleared"
