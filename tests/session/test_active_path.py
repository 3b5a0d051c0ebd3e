"""The active path carried on from the last derivation equals the one derived afresh.

A log grows by random questions, answers, tool calls and results, interrupted
replies, turns that get cancelled (also after later turns ran), and tree
operations (forks, jumps, hides, restores, reparents, attaches) recorded as the
daemon records them; after every change the carried-on path must be the derived
one, and the tree derived afresh after every operation.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from bonsai.agent import active_path
from bonsai.core.history.tree import OP_KINDS, ROOT, TreeOp
from bonsai.domain import Message, ToolCall
from bonsai.services.store.db import open_database
from bonsai.services.store.sessions import SessionStore
from bonsai.services.store.tree import TreeStore
from bonsai.services.store.tree import active_history as derived
from bonsai.services.store.turns import TurnStore
from bonsai.session.view_store import CachedStore, MessageCache


def _message(rng: random.Random, n: int, calls: list[str]) -> Message:
    roll = rng.random()
    if roll < 0.3:
        return Message(role="user", content=f"question {n}")
    if roll < 0.45 and calls:
        return Message(role="tool", content=f"result {n}", tool_call_id=calls.pop())
    if roll < 0.6:
        call = ToolCall(id=f"call{n}", name="read_file", arguments="{}")
        calls.append(call.id)
        return Message(role="assistant", content="", tool_calls=[call])
    status = "interrupted" if roll < 0.65 else "complete"
    return Message(role="assistant", content=f"answer {n}", status=status)  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", range(4))
def test_the_carried_on_path_is_the_derived_one_over_random_logs_and_operations(
    tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    db = open_database(tmp_path / "bonsai.db")
    store = CachedStore(db, MessageCache())  # unchanged rows are the same objects
    plain, tree, turns = SessionStore(db), TreeStore(db), TurnStore(db)
    sid = store.create(str(tmp_path)).session_id
    calls: list[str] = []
    turn_ids: list[str] = []
    grown, start = 0, active_path.derived()
    for n in range(120):
        roll = rng.random()
        ids = [s.message_id for s in plain.messages(sid)]
        before = active_path.derived()
        if roll < 0.7 or not ids:
            turn_id = f"t{n}"
            turns.start(sid, turn_id)
            turn_ids.append(turn_id)
            store.append(sid, _message(rng, n, calls), turn_id=turn_id)
            grown += 1
        elif roll < 0.9:
            kind = rng.choice(OP_KINDS)
            node = ROOT if kind == "fork" and rng.random() < 0.2 else rng.choice(ids)
            parent = rng.choice([None, *ids]) if kind in ("reparent", "attach") else None
            last = plain.messages(sid)[-1].seq
            tree.add(sid, TreeOp(kind=kind, node_id=node, parent_id=parent, after_seq=last))
        else:  # a turn cancelled, maybe one long past
            turn_id = rng.choice(turn_ids)
            turns.finish(sid, turn_id, "cancelled", None, [])
        history = store.messages(sid)
        assert active_path.active_history(db, sid, history) == derived(db, sid, history), n
        if 0.7 <= roll < 0.9 and ids:
            assert active_path.derived() == before + 1, "an operation: derived afresh"
    assert active_path.derived() - start < grown / 2, "growth was carried on"
    db.close()


def test_a_message_read_afresh_derives_the_tree_again(tmp_path: Path) -> None:
    db = open_database(tmp_path / "bonsai.db")
    store = CachedStore(db, MessageCache())
    sid = store.create(str(tmp_path)).session_id
    for text in ("q", "a"):
        store.append(sid, Message(role="user" if text == "q" else "assistant", content=text))
    active_path.active_history(db, sid, store.messages(sid))
    before = active_path.derived()
    db.execute("UPDATE messages SET content = 'A' WHERE session_id = ? AND seq = 2", (sid,))
    path = active_path.active_history(db, sid, store.messages(sid))
    assert [s.message.content for s in path] == ["q", "A"]
    assert active_path.derived() == before + 1
    db.close()
