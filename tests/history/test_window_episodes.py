"""O(window) history with task episodes on, the window starting inside an episode.

Property-style: each generated session runs twice, turn by turn, in one real
store with the real bridge, pipeline and tokenizer and a small model window
(so the deterministic rolling summary folds and episodes archive on their
own): once as the daemon runs it (read the window after the durable boundary,
assemble, save) and once always over the whole log. At every turn both must
send the same request, and the window must really be used, also when the
session is one long episode.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from history_helpers import make_bridge, open_store

from bonsai.agent.context_bridge import ContextBridge
from bonsai.core.context import apply_action, assemble
from bonsai.core.history.tree import TreeOp
from bonsai.domain import Evidence, Message, ToolCall
from bonsai.services.store.history import HistoryWindow
from bonsai.services.store.sessions import SessionStore
from bonsai.services.store.tree import TreeStore
from bonsai.settings import Settings

TURNS = 70
SETTINGS = Settings.model_validate(
    {"context": {"output_reserve": 1_000, "summary_mode": "deterministic"}}
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def small_bridge(store: SessionStore, sid: str, workspace: Path) -> ContextBridge:
    """The real bridge over a model whose window is 5,000 tokens (folds come early)."""
    return make_bridge(store, sid, workspace, SETTINGS, window=5_000)


def tool_step(rng: random.Random, i: int, action: str | None) -> list[Message]:
    """A user request and the agent's work on it: reads, edits, maybe a title call."""
    calls: list[ToolCall] = []
    results: list[Message] = []
    if action is not None:
        args = json.dumps({"title": f"topic {i}", "episode_action": action})
        calls.append(ToolCall(id=f"title_{i}", name="set_session_title", arguments=args))
        results.append(Message(role="tool", content="ok", tool_call_id=f"title_{i}"))
    for n in range(rng.randint(0 if action else 1, 2)):
        path = f"src/m{rng.randint(0, 30)}.py"
        edit = rng.random() < 0.3
        name = "write_file" if edit else "read_file"
        call = ToolCall(id=f"call_{i}_{n}", name=name, arguments=json.dumps({"path": path}))
        calls.append(call)
        body = "written" if edit else "\n".join(f"line {k} of {path} (v{i})" for k in range(8))
        evidence = Evidence(kind="write" if edit else "read", path=path, content_hash=f"h{i}_{n}")
        results.append(
            Message(role="tool", content=body, tool_call_id=call.id, name=name, evidence=evidence)
        )
    results = [r.model_copy(update={"name": c.name}) for r, c in zip(results, calls, strict=True)]
    return [
        Message(role="user", content=f"Request {i}: please handle item {i}."),
        Message(role="assistant", content=f"Working on {i}.", tool_calls=tuple(calls)),
        *results,
        Message(role="assistant", content=f"Done with item {i}."),
    ]


def chat_step(i: int) -> list[Message]:
    """A question answered without tools."""
    return [
        Message(role="user", content=f"Question {i}: what did you change so far?"),
        Message(role="assistant", content=f"Answer {i}: the items listed above."),
    ]


@dataclass
class Twin:
    """One generated session run two ways in one store."""

    store: SessionStore
    workspace: Path
    windowed: str
    whole: str
    windows: int = 0  # turns that read a history window
    inside: int = 0  # turns whose window started inside an episode
    boundary_moves: list[int] = field(default_factory=list)

    def append(self, messages: list[Message]) -> None:
        for sid in (self.windowed, self.whole):
            self.store.append_many(sid, messages)

    def same_ids(self, seq: int) -> tuple[str, str]:
        """The message at ``seq`` in each session."""
        a, b = (self.store.messages(sid, after_seq=seq - 1)[0] for sid in self.pair)
        return a.message_id, b.message_id

    @property
    def pair(self) -> tuple[str, str]:
        return self.windowed, self.whole

    def turn(self, turn: int) -> tuple[Any, Any]:
        bridge = small_bridge(self.store, self.windowed, self.workspace)
        history = bridge.history()
        windowed = bridge.assemble(history, turn)
        if isinstance(history, HistoryWindow):
            self.windows += 1
            carried = history.boundary.episode
            listed = [row.number for row in windowed.episodes]
            if carried is not None and listed[:1] == [carried.number]:
                self.inside += 1  # the episode open before the window goes on in it
        before = bridge.state().boundary
        whole_bridge = small_bridge(self.store, self.whole, self.workspace)
        whole = assemble(whole_bridge.input(self.store.messages(self.whole), turn))
        whole_bridge.save_state(whole.state)
        if before is not None:
            self.boundary_moves.append(before.start_seq)
        return windowed, whole

    def pin(self, seq: int, turn: int) -> None:
        """``bonsai/ctx/pin`` on the message at ``seq`` (whole log, whole state)."""
        for sid, node in zip(self.pair, self.same_ids(seq), strict=True):
            bridge = small_bridge(self.store, sid, self.workspace)
            inp = bridge.input(self.store.messages(sid), turn)
            if node in {i.id for i in inp.items}:
                state, _ = apply_action(inp.state, inp.items, node, "pin", turn)
                bridge.save_state(state)

    def fork(self, seq: int) -> None:
        """Branch from the message at ``seq``: the next messages continue from it."""
        for sid, node in zip(self.pair, self.same_ids(seq), strict=True):
            last = self.store.messages(sid)[-1].seq
            TreeStore(self.store.conn).add(sid, TreeOp(kind="fork", node_id=node, after_seq=last))


def normalized(assembly: Any, store: SessionStore, sid: str) -> str:
    """The request as JSON, message ids replaced by their seq (the twins' ids differ)."""
    seqs = {s.message_id: f"#{s.seq}" for s in store.messages(sid)}
    text = json.dumps(
        {
            "system": [p.text for p in assembly.system],
            "messages": [m.model_dump(mode="json") for m in assembly.messages],
            "tools": assembly.tools,
            "totals": assembly.totals.model_dump(mode="json"),
        }
    )
    return re.sub(r"m_[0-9a-f]{16}", lambda m: seqs.get(m.group(0), m.group(0)), text)


def episode_rows(assembly: Any) -> list[tuple[int, str, str, int]]:
    return [(e.number, e.title, e.state, e.messages) for e in assembly.episodes]


def run(shape: str, seed: int, home: Path, workspace: Path) -> Twin:
    rng = random.Random(f"{shape}-{seed}")
    store = open_store(home)
    twin = Twin(
        store,
        workspace,
        store.create(str(workspace), "windowed").session_id,
        store.create(str(workspace), "whole").session_id,
    )
    last_start = None
    for i in range(TURNS):
        boundary = small_bridge(store, twin.windowed, workspace).state().boundary
        moved = boundary is not None and boundary.start_seq != last_start
        last_start = boundary.start_seq if boundary is not None else None
        action = None
        if shape == "several" and rng.random() < 0.2:
            action = "new_topic"
        elif shape == "after-boundary" and moved:
            action = "new_topic"  # a topic change right after the boundary moved
        elif shape != "one" and rng.random() < 0.1:
            action = "same_topic"
        if shape == "tree" and i > 10 and rng.random() < 0.07:
            log = store.messages(twin.windowed)
            target = rng.choice(log[len(log) // 2 :])
            if rng.random() < 0.5:
                twin.pin(target.seq, i)
            else:
                twin.fork(target.seq)
            action = "new_topic" if rng.random() < 0.5 else None
        step = chat_step(i) if rng.random() < 0.15 and action is None else tool_step(rng, i, action)
        twin.append(step)
        windowed, whole = twin.turn(i + 1)
        assert normalized(windowed, store, twin.windowed) == normalized(whole, store, twin.whole), (
            f"turn {i + 1} of {shape} session {seed}: the window sent another request"
        )
        listed = episode_rows(windowed)  # episodes wholly before the window are not listed
        assert listed and listed == episode_rows(whole)[-len(listed) :], (
            f"turn {i + 1} of {shape} session {seed}: episodes numbered or archived otherwise"
        )
    return twin


SESSIONS = [  # generated shapes; seeds whose runs set a window at least three times
    ("one", 1),
    ("one", 2),
    ("several", 1),
    ("several", 4),
    ("after-boundary", 1),
    ("after-boundary", 2),
    ("tree", 1),
    ("tree", 4),
]


@pytest.mark.parametrize(("shape", "seed"), SESSIONS)
def test_the_window_sends_the_same_request_as_a_whole_log_read_at_every_turn(
    shape: str, seed: int, home: Path, workspace: Path
) -> None:
    twin = run(shape, seed, home, workspace)
    assert twin.windows >= 3, "turns read only the window"
    if shape in ("one", "after-boundary"):  # nothing archived or pinned holds the boundary
        assert twin.windows > TURNS // 2, "most turns read only the window"
        assert twin.inside > TURNS // 2, "the window starts inside the open episode"
        assert len(set(twin.boundary_moves)) >= 3, "the boundary moves as the summary folds more"
