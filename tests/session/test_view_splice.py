"""A ctx/get answer joined from kept fragments is the bytes the whole result encodes to.

The ledger rows' JSON is kept by row identity and spliced after the head; the wire
view's messages are encoded one by one. Over random appends, pins, drops, stubs and
restores, every view's spliced answer must equal the encoding of the result built
whole, a row whose state changed must show its new state at once, and what the
worker keeps between views (messages, items, rows, memos) must give the answer a
fresh daemon computes from nothing.
"""

from __future__ import annotations

import random
from functools import partial
from pathlib import Path
from typing import Any, cast

import pytest

from bonsai.agent.context_bridge import to_items
from bonsai.daemon.handlers import ctx as handlers
from bonsai.daemon.rpc import Ctx
from bonsai.daemon.state import Daemon
from bonsai.domain import Message, StoredMessage
from bonsai.protocol import models as m
from bonsai.protocol.models import CtxGetResult
from bonsai.services.store.db import open_database
from bonsai.session.host import Host
from bonsai.session.server_facts import ensure_facts
from bonsai.session.splice import KeptBytes, encode, joined
from bonsai.session.views import Encoded
from ctx_oracle import random_step, whole_view


def _daemon(tmp_path: Path) -> Daemon:
    db_path = tmp_path / "bonsai.db"
    return Daemon(tmp_path, open_database(db_path), db_path)


async def _ledger(daemon: Daemon, sid: str) -> bytes:
    return (await _both(daemon, sid, "ledger"))[0]


async def _both(daemon: Daemon, sid: str, view: str) -> tuple[bytes, bytes]:
    params = m.CtxGetParams(session_id=sid, view=view)  # type: ignore[arg-type]

    def compute(host: Host) -> tuple[bytes, bytes]:
        return handlers._answer(host, params).body, Encoded.of(whole_view(host, params)).body

    return await daemon.views.run(daemon, sid, compute)


@pytest.mark.parametrize("seed", [1, 2])
async def test_spliced_answers_equal_the_whole_encoding_over_random_operations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    monkeypatch.setenv("BONSAI_PROVIDER", "sim")
    monkeypatch.setenv("BONSAI_MODEL", "gpt-4o-mini")
    daemon = _daemon(tmp_path)
    sid = daemon.store.create(str(tmp_path)).session_id
    await ensure_facts(daemon, sid)
    rng = random.Random(seed)
    ctx = Ctx(daemon, cast(Any, None), cast(Any, None))
    states_seen: set[str] = set()
    for step in range(30):
        state = await random_step(daemon, ctx, sid, rng, step, partial(_ledger, daemon, sid))
        if state is not None:
            states_seen.add(state)
        for view in ("ledger", "wire", "turns"):
            spliced, whole = await _both(daemon, sid, view)
            assert spliced == whole, f"step {step}, {view} view"
        if step % 10 == 9:  # what the worker keeps between views changes nothing shown
            fresh = Daemon(tmp_path, daemon.db, daemon.db_path)
            fresh.hub.counters = daemon.hub.counters  # the tokenizer, loaded once
            await ensure_facts(fresh, sid)
            for view in ("ledger", "wire", "turns"):
                kept = (await _both(daemon, sid, view))[0]
                assert (await _both(fresh, sid, view))[0] == kept, f"step {step}, {view} view"
            fresh.views.close()
    assert states_seen - {"full"}, "the operations changed some row's state"
    daemon.views.close()
    daemon.db.close()


def test_a_row_is_encoded_once_while_it_is_the_same_object() -> None:
    kept: KeptBytes[m.CtxNode] = KeptBytes(encode, limit=2)
    a = m.CtxNode(
        id="a",
        kind="user",
        section="messages",
        label="a",
        tokens=1,
        confidence="exact",
        state="full",
    )
    b = a.model_copy(update={"state": "pinned"})
    assert kept(a) == encode(a) and kept(a) == encode(a)
    assert kept.encoded == 1, "the same row again: its kept bytes"
    assert kept(b) == encode(b) and b'"pinned"' in kept(b), "another row: encoded afresh"
    kept(a.model_copy())  # a third row pushes the oldest out
    assert kept.encoded == 3


def test_a_field_set_after_the_spliced_ones_is_refused() -> None:
    head = CtxGetResult(view="ledger", turns=[])
    with pytest.raises(ValueError):
        joined(head, [("nodes", [])])
    assert joined(CtxGetResult(view="turns"), [("nodes", []), ("turns", [])]) == encode(
        CtxGetResult(view="turns", nodes=[], turns=[])
    )


def test_items_are_kept_for_the_same_message_and_turn_only() -> None:
    def stored(n: int, role: str, text: str) -> StoredMessage:
        return StoredMessage(
            message_id=f"m{n}",
            session_id="s",
            seq=n,
            created_at=0.0,
            message=Message(role=role, content=text),  # type: ignore[arg-type]
        )

    log = [stored(1, "user", "q1"), stored(2, "assistant", "a1"), stored(3, "user", "q2")]
    first = to_items(log)
    again = to_items([*log, stored(4, "assistant", "a2")])
    assert all(a is b for a, b in zip(first, again, strict=False)), "the same messages: kept"
    edited = to_items([log[0], stored(2, "assistant", "A1"), log[2]])
    assert edited[1].message.content == "A1" and edited[0] is first[0]
    without_first = to_items(log[1:])  # the first question gone from the path: turns shift
    assert [i.turn for i in without_first] == [0, 1]
    assert without_first[1] is not first[2]
