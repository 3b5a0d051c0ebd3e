"""Views of a session that grew cost its new messages: what the worker keeps between views.

The view worker keeps the messages it read (a row read again exactly as it was is
the same message, so the assembly memos hit on identity), and a ledger asked for
again while nothing moved is answered with the bytes it was sent as the last time.
Neither may ever show a stale log.
"""

from __future__ import annotations

import json
from pathlib import Path

from pytest_lsp import LanguageClient

from bonsai.daemon.state import Daemon
from bonsai.domain import Message
from bonsai.services.store.db import open_database
from bonsai.services.store.sessions import SessionStore
from bonsai.session.view_store import CachedStore, MessageCache
from bonsai_testing import rpc


def test_a_message_read_again_unchanged_is_kept_and_a_changed_row_is_read_afresh(
    tmp_path: Path,
) -> None:
    db = open_database(tmp_path / "bonsai.db")
    store = SessionStore(db)
    sid = store.create(str(tmp_path)).session_id
    other = store.create(str(tmp_path)).session_id
    for text in ("one", "two"):
        store.append(sid, Message(role="user", content=text))
    store.append(other, Message(role="user", content="elsewhere"))
    view = CachedStore(db, MessageCache())

    first = view.messages(sid)
    store.append(sid, Message(role="assistant", content="three"))
    second = view.messages(sid)
    assert [s.message.content for s in second] == ["one", "two", "three"]
    assert second[0] is first[0] and second[1] is first[1], "unchanged rows: the same messages"
    assert view.messages(sid) == store.messages(sid), "what the plain store reads"

    # a row rewritten in place (a repair, a hand edit of the file) is read again
    db.execute("UPDATE messages SET content = 'TWO' WHERE session_id = ? AND seq = ?", (sid, 2))
    third = view.messages(sid)
    assert [s.message.content for s in third] == ["one", "TWO", "three"]
    assert third == store.messages(sid)
    assert [s.message.content for s in view.messages(other)] == ["elsewhere"]
    assert [s.message.content for s in view.messages(sid, after_seq=2)] == ["three"]
    db.close()


async def test_an_unchanged_ledger_is_answered_alike_and_a_write_shows_at_once(
    stdio_client: LanguageClient, tmp_path: Path
) -> None:
    client = stdio_client
    sid = (await rpc(client, "bonsai/session/create", {"workspace": str(tmp_path)}))["sessionId"]
    append = {"sessionId": sid, "role": "user", "content": "the first words"}
    await rpc(client, "bonsai/session/append", append)
    get = {"sessionId": sid, "view": "ledger"}
    first = await rpc(client, "bonsai/ctx/get", get)
    again = await rpc(client, "bonsai/ctx/get", get)
    assert again == first
    messages = [n for n in first["nodes"] if n["section"] == "messages"]
    assert len(messages) == 1

    # not ASCII: the answer is UTF-8 and framed by its length in bytes
    await rpc(client, "bonsai/session/append", {**append, "content": "more words, déjà vu 日本"})
    after = await rpc(client, "bonsai/ctx/get", get)
    messages = [n for n in after["nodes"] if n["section"] == "messages"]
    assert len(messages) == 2, "the write is in the next answer, not a kept one"
    assert after["totals"]["used"] > first["totals"]["used"]
    wire = await rpc(client, "bonsai/ctx/get", {**get, "view": "wire"})
    sent = json.dumps(wire["messages"])
    assert "the first words" in sent
    assert any("more words, déjà vu 日本" in str(m["content"]) for m in wire["messages"])


def test_the_messages_of_the_sessions_read_last_are_kept_and_the_oldest_let_go(
    tmp_path: Path,
) -> None:
    db = open_database(tmp_path / "bonsai.db")
    store = SessionStore(db)
    sids = [store.create(str(tmp_path)).session_id for _ in range(3)]
    for sid in sids:
        store.append(sid, Message(role="user", content=f"in {sid}"))
    cached = CachedStore(db, MessageCache(limit=2))
    first = {sid: cached.messages(sid)[0] for sid in sids}  # the first session let go
    assert cached.messages(sids[2])[0] is first[sids[2]], "read last: kept"
    assert cached.messages(sids[1])[0] is first[sids[1]]
    again = cached.messages(sids[0])[0]
    assert again is not first[sids[0]] and again == first[sids[0]], "let go: read afresh, alike"
    db.close()


def test_the_daemons_own_store_keeps_what_it_read_for_the_next_turn(tmp_path: Path) -> None:
    db_path = tmp_path / "bonsai.db"
    daemon = Daemon(tmp_path, open_database(db_path), db_path)
    sid = daemon.store.create(str(tmp_path)).session_id
    daemon.store.append(sid, Message(role="user", content="the question"))
    before = daemon.store.messages(sid)
    daemon.store.append(sid, Message(role="assistant", content="the answer"))
    after = daemon.store.messages(sid)
    assert after[0] is before[0], "a turn's history read again: the same message"
    assert after == SessionStore(daemon.db).messages(sid), "what the plain store reads"
    daemon.db.close()


def test_recall_reads_its_hits_in_one_query_and_never_another_sessions_message(
    tmp_path: Path,
) -> None:
    db = open_database(tmp_path / "bonsai.db")
    store = SessionStore(db)
    sid, other = (store.create(str(tmp_path)).session_id for _ in range(2))
    mine = [store.append(sid, Message(role="user", content=t)) for t in ("a", "b", "c")]
    theirs = store.append(other, Message(role="user", content="not yours"))
    cached = CachedStore(db, MessageCache())
    read = cached.messages(sid)
    ids = [mine[2].message_id, theirs.message_id, "no-such-id", mine[0].message_id]
    found = cached.messages_by_id(sid, ids)
    assert sorted(found) == sorted([mine[0].message_id, mine[2].message_id])
    assert found[mine[2].message_id] is read[2], "a message already read is the same one"
    assert store.messages_by_id(sid, []) == {}
    db.close()
