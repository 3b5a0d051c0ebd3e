"""O(window) history: a turn reads only the log after the durable summary boundary.

Real store (SQLite), real bridge, real pipeline and tokenizer. The long session
is built straight into the store with a rolling summary folding all but its
last messages, as a long session's compactions leave it. Every test compares
the windowed request with the request assembled over the whole log.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from history_helpers import build_session, fold_all_but, make_bridge, open_store, step

from bonsai.core.context import apply_action, assemble
from bonsai.core.history.tree import TreeOp
from bonsai.domain import Message, StoredMessage
from bonsai.services.store.history import HistoryWindow
from bonsai.services.store.sessions import SessionStore
from bonsai.services.store.tree import TreeStore
from bonsai.settings import Settings

MESSAGES = 4_000


class CountingStore(SessionStore):
    """The real store, counting the message rows each read returns."""

    rows = 0

    def messages(self, session_id: str, after_seq: int = 0) -> list[StoredMessage]:
        out = super().messages(session_id, after_seq)
        self.rows += len(out)
        return out

    def message(self, session_id: str, message_id: str) -> StoredMessage | None:
        self.rows += 1
        return super().message(session_id, message_id)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def long_session(home: Path, workspace: Path, keep: int = 40) -> tuple[SessionStore, str]:
    store = open_store(home)
    sid = build_session(store, workspace, MESSAGES)
    fold_all_but(store, sid, keep)
    return store, sid


def requests(store: SessionStore, sid: str, workspace: Path, turn: int = 9) -> tuple[Any, Any]:
    """(the windowed request a turn builds, the request over the whole log)."""
    bridge = make_bridge(store, sid, workspace, Settings())
    windowed = assemble(bridge.window_input(bridge.history(), turn))
    whole = assemble(bridge.input(store.messages(sid), turn))
    return windowed, whole


def same_request(a: Any, b: Any) -> None:
    assert a.messages == b.messages
    assert a.system == b.system and a.tools == b.tools
    assert a.totals == b.totals


def add_turn(store: SessionStore, sid: str, i: int) -> None:
    store.append_many(sid, step(i))


def test_a_long_session_reads_only_the_window_and_sends_the_same_request(
    home: Path, workspace: Path
) -> None:
    store, sid = long_session(home, workspace)
    bridge = make_bridge(store, sid, workspace, Settings())
    bridge.window_input(bridge.history(), 9)  # the first turn after the folds sets the boundary
    counting = CountingStore(store.conn)
    for i in range(3):  # three more turns, each a user request and a tool step
        add_turn(store, sid, 10_000 + i)
        bridge = make_bridge(counting, sid, workspace, Settings())
        counting.rows = 0
        history = bridge.history()
        windowed = assemble(bridge.window_input(history, 10 + i))
        assert isinstance(history, HistoryWindow)
        assert counting.rows < 120, "a turn reads the window, not the 4,000-message log"
        whole = assemble(bridge.input(store.messages(sid), 10 + i))
        same_request(windowed, whole)
        sent = [m.content for m in windowed.messages]
        assert f"Fixed bug {10_000 + i} in `src/m{i}.py`." in sent, "the new step is sent"
    state_bytes = len(json.dumps(bridge.state().model_dump(mode="json")))
    whole_bytes = len(json.dumps(bridge.input(store.messages(sid), 13).state.model_dump()))
    assert state_bytes < 4_000 < whole_bytes, "the per-turn state no longer lists every fold"


def test_the_boundary_and_summary_survive_a_restart(home: Path, workspace: Path) -> None:
    store, sid = long_session(home, workspace)
    bridge = make_bridge(store, sid, workspace, Settings())
    before = assemble(bridge.window_input(bridge.history(), 9))
    boundary = bridge.state().boundary
    assert boundary is not None
    store.conn.close()

    reopened = open_store(home)  # what a restarted daemon opens
    bridge = make_bridge(reopened, sid, workspace, Settings())
    history = bridge.history()
    assert isinstance(history, HistoryWindow) and history.boundary == boundary
    after = assemble(bridge.window_input(history, 9))
    same_request(before, after)
    summary = after.messages[0].content
    assert summary.startswith("[bonsai summary of earlier messages: lossy reference data")
    assert summary.splitlines()[-1].startswith("[summary revision 1, messages seq 1–")


def test_a_fork_before_the_boundary_falls_back_to_the_whole_log(
    home: Path, workspace: Path
) -> None:
    store, sid = long_session(home, workspace)
    bridge = make_bridge(store, sid, workspace, Settings())
    bridge.window_input(bridge.history(), 9)
    boundary = bridge.state().boundary
    assert boundary is not None
    log = store.messages(sid)
    early = next(s for s in log if s.message.content.startswith("Fixed bug 20 "))
    TreeStore(store.conn).add(
        sid, TreeOp(kind="fork", node_id=early.message_id, after_seq=log[-1].seq)
    )
    store.append(sid, Message(role="user", content="Back to bug 20: try another fix."))

    history = bridge.history()
    assert not isinstance(history, HistoryWindow), "a tree operation since the boundary"
    windowed = assemble(bridge.window_input(history, 10))
    whole = assemble(bridge.input(store.messages(sid), 10))
    same_request(windowed, whole)
    sent = "\n".join(m.content for m in windowed.messages)
    assert "Back to bug 20: try another fix." in sent
    assert "Request 990:" not in sent, "the old branch's tail is not on the new path"


def test_a_pin_or_restore_before_the_boundary_moves_it_back(home: Path, workspace: Path) -> None:
    store, sid = long_session(home, workspace)
    bridge = make_bridge(store, sid, workspace, Settings())
    bridge.window_input(bridge.history(), 9)
    first = bridge.state().boundary
    assert first is not None
    log = store.messages(sid)

    for action, bug in (("pin", 500), ("restore", 300)):
        old = next(s for s in log if s.message.content.startswith(f"Fixed bug {bug} "))
        assert old.seq < first.start_seq
        inp = bridge.input(store.messages(sid), 9)  # what bonsai/ctx/<action> does
        state, _ = apply_action(inp.state, inp.items, old.message_id, action, 9)
        bridge.save_state(state)
        windowed = assemble(bridge.window_input(bridge.history(), 9))
        whole = assemble(bridge.input(store.messages(sid), 9))
        same_request(windowed, whole)
        assert old.message.content in [m.content for m in windowed.messages]
        moved = bridge.state().boundary
        assert moved is not None and moved.start_seq <= old.seq, "it stops before the node"
        assert isinstance(bridge.history(), HistoryWindow)
