"""The database: survives restarts, migrates old schemas, refuses foreign files."""

from __future__ import annotations

import subprocess
from pathlib import Path

import apsw
import pytest

from bonsai.domain import Evidence, Message, ToolCall
from bonsai.services.store.db import DatabaseCorrupt, current_version, open_database
from bonsai.services.store.migrations import SCHEMA_VERSION, V1
from bonsai.services.store.sessions import SessionStore
from bonsai_testing import BONSAI, bonsai_env, close_client, rpc, start_client


async def test_sessions_survive_a_daemon_restart(home: Path, tmp_path: Path) -> None:
    client = await start_client([*BONSAI, "serve", "--stdio"], bonsai_env(home))
    sid = (
        await rpc(client, "bonsai/session/create", {"workspace": str(tmp_path), "title": "keep"})
    )["sessionId"]
    await rpc(client, "bonsai/session/append", {"sessionId": sid, "role": "user", "content": "a"})
    await close_client(client)

    client = await start_client([*BONSAI, "serve", "--stdio"], bonsai_env(home))
    try:
        attached = await rpc(client, "bonsai/session/attach", {"sessionId": sid})
        assert attached["session"]["title"] == "keep"
        assert [m["content"] for m in attached["messages"]] == ["a"]
    finally:
        await close_client(client)


def test_migration_from_version_one_keeps_data(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    conn = apsw.Connection(str(db))
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    conn.execute(V1)
    conn.execute("INSERT INTO schema_version VALUES (1)")
    conn.execute("INSERT INTO sessions VALUES ('s1', 'old', '/ws', 1.0, 2.0)")
    conn.execute("INSERT INTO messages VALUES ('m1', 's1', 1, 'user', 'from v1', 1.5)")
    conn.close()

    migrated = open_database(db)
    assert current_version(migrated) == SCHEMA_VERSION
    store = SessionStore(migrated)
    [old] = store.messages("s1")
    assert old.message == Message(role="user", content="from v1")
    hits = migrated.execute("SELECT message_id FROM messages_fts WHERE messages_fts MATCH 'v1'")
    assert [row[0] for row in hits] == ["m1"], "old messages are searchable after migrating"


def test_messages_round_trip_with_tool_calls_and_evidence(tmp_path: Path) -> None:
    store = SessionStore(open_database(tmp_path / "b.db"))
    sid = store.create("/ws").session_id
    call = ToolCall(id="c1", name="read_file", arguments='{"path": "a.py"}')
    messages = [
        Message(role="assistant", content="", tool_calls=(call,)),
        Message(
            role="tool",
            content="print(1)\n",
            tool_call_id="c1",
            name="read_file",
            evidence=Evidence(kind="read", path="a.py", content_hash="h"),
        ),
    ]
    store.append_many(sid, messages, turn_id="t1")
    assert [s.message for s in store.messages(sid)] == messages
    assert [s.seq for s in store.messages(sid)] == [1, 2]


def test_delete_removes_everything_of_a_session(tmp_path: Path) -> None:
    conn = open_database(tmp_path / "b.db")
    store = SessionStore(conn)
    sid = store.create("/ws").session_id
    store.append(sid, Message(role="user", content="secret plans"))
    store.set_state(sid, "k", {"v": 1})
    store.delete(sid)
    for table in ("messages", "session_state", "messages_fts"):
        count = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
        assert count is not None and count[0] == 0, table


@pytest.mark.parametrize(
    ("content", "fragment"),
    [(b"this is not sqlite at all" * 100, "not a usable bonsai database"), (None, "foreign")],
)
def test_corrupt_or_foreign_database_is_refused_clearly(
    home: Path, content: bytes | None, fragment: str
) -> None:
    db = home / "bonsai.db"
    if content is None:
        conn = apsw.Connection(str(db))
        conn.execute("CREATE TABLE invoices (id INTEGER)")
        conn.close()
    else:
        db.write_bytes(content)
    before = db.read_bytes()
    with pytest.raises(DatabaseCorrupt) as info:
        open_database(db)
    assert fragment in str(info.value)
    assert "mv " in str(info.value), "suggests a recovery"
    assert db.read_bytes() == before, "never silently rewritten"

    result = subprocess.run(
        [*BONSAI, "serve", "--stdio"],
        env=bonsai_env(home),
        input=b"",
        capture_output=True,
        timeout=30,
    )
    assert result.returncode == 2
    assert fragment.encode() in result.stderr
