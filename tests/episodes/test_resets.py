"""Hard resets (/clear, /start, /review) close the open task episode, end to end.

The segmenter (pure), the history window against a whole-log read, the
``bonsai/session/reset`` method over real JSON-RPC (durable across a restart),
and the agent loop against the simulator: work, /clear, new work, the closed
episode archived to its card once pressure comes.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from bonsai.agent.context_bridge import ContextBridge
from bonsai.core.context import assemble
from bonsai.core.context.episodes_stage import with_reset
from bonsai.core.history.episodes import segment, segment_entries
from bonsai.domain import Message, ToolCall
from bonsai.services.store.history import HistoryWindow
from bonsai.services.store.sessions import SessionStore
from bonsai.settings import Settings
from bonsai.sim import Fault, Script
from bonsai.sim.script import Reply, Rule
from bonsai_testing import events_of
from episodes.episode_helpers import PRESSURE_KEYS
from episodes.rig import call, make_rig, small_window, write_config
from episodes.test_segment import log_of, title, user, work
from history.history_helpers import make_bridge, open_store


# ------------------------------------------------------------------ the segmenter
def test_a_reset_closes_the_open_episode_without_a_new_topic() -> None:
    log = log_of(user("fix the parser"), *work("w1"), user("now the CLI"), *work("w2"))
    [first, second] = segment(log, resets=[4])
    assert first.closed and first.ids == ["m1", "m2", "m3"] and first.task == "fix the parser"
    assert not second.closed and second.ids == ["m4", "m5", "m6"]
    assert (first.number, second.number) == (1, 2)


def test_a_reset_after_the_last_message_closes_it_and_opens_nothing() -> None:
    log = log_of(user("fix the parser"), *work("w1"))
    [only] = segment(log, resets=[4])
    assert only.closed, "/clear shows at once: the episode is closed before anything new"
    assert [e.closed for e in segment(log)] == [False]


def test_a_reset_applies_across_a_gap_in_seqs() -> None:
    """Messages of a cancelled turn are not on the path: the next one still starts anew."""
    log = log_of(user("a"), *work("w1"), user("cancelled"), user("b"))
    path = [log[0], log[1], log[2], log[4]]  # seq 4 is not on the active path
    episodes = segment(path, resets=[4])
    assert [e.ids for e in episodes] == [["m1", "m2", "m3"], ["m5"]]


def test_a_new_topic_after_a_reset_does_not_close_the_fresh_episode() -> None:
    log = log_of(user("a"), *work("w1"), user("b"), title("B", "new_topic", "t1"))
    episodes = segment(log, resets=[4])
    assert [(e.number, e.title, e.closed) for e in episodes] == [(1, "", True), (2, "B", False)]


@pytest.mark.parametrize("split", [2, 4, 6, 7])
def test_resuming_at_any_user_message_gives_the_whole_log_episodes(split: int) -> None:
    """A window starting before, at or after a reset numbers and closes as the whole log."""
    log = log_of(user("a"), *work("w1"), user("b"), *work("w2"), user("c"), *work("w3"), user("d"))
    entries = [(s.message_id, s.seq, s.message) for s in log]
    users = [i for i, (_, _, m) in enumerate(entries) if m.role == "user"]
    start = users[min(split // 2, len(users) - 1)]
    resets = [4, 10]
    whole = segment_entries(entries, resets)
    before = segment_entries(entries[:start], resets)
    resumed = segment_entries(entries[start:], resets, before[-1].resumed())
    tail = [e for e in resumed if e.ids]
    expected = [e for e in whole if e.number >= tail[0].number]
    assert [(e.number, e.closed) for e in tail] == [(e.number, e.closed) for e in expected]
    assert tail[-1].ids == expected[-1].ids


# ------------------------------------------------------------------ window vs whole log
SETTINGS = Settings.model_validate(
    {"context": {"output_reserve": 1_000, "summary_mode": "deterministic", **PRESSURE_KEYS}}
)


def small_bridge(store: SessionStore, sid: str, workspace: Path) -> ContextBridge:
    """The real bridge over a model whose window is 5,000 tokens (folds come early)."""
    return make_bridge(store, sid, workspace, SETTINGS, window=5_000)


def step(rng: random.Random, i: int) -> list[Message]:
    """A request and its work (reads), or a question answered without tools."""
    if rng.random() < 0.15:
        return [user(f"Question {i}: what changed?"), Message(role="assistant", content="All.")]
    messages = [user(f"Request {i}: handle item {i}.")]
    for n in range(rng.randint(1, 2)):
        path = f"src/m{rng.randint(0, 30)}.py"
        call_ = ToolCall(id=f"c{i}_{n}", name="read_file", arguments=json.dumps({"path": path}))
        body = "\n".join(f"line {k} of {path} (v{i})" for k in range(8))
        messages += [
            Message(role="assistant", content=f"Reading {path}.", tool_calls=(call_,)),
            Message(role="tool", content=body, tool_call_id=call_.id, name="read_file"),
        ]
    return [*messages, Message(role="assistant", content=f"Done with item {i}.")]


def normalized(assembly: Any, store: SessionStore, sid: str) -> str:
    """The request as JSON, message ids replaced by their seq (the two sessions' ids differ)."""
    seqs = {s.message_id: f"#{s.seq}" for s in store.messages(sid)}
    text = json.dumps(
        {
            "system": [p.text for p in assembly.system],
            "messages": [m.model_dump(mode="json") for m in assembly.messages],
        }
    )
    return re.sub(r"m_[0-9a-f]{16}", lambda m: seqs.get(m.group(0), m.group(0)), text)


def rows(assembly: Any) -> list[tuple[int, str, int]]:
    return [(e.number, e.state, e.messages) for e in assembly.episodes]


@pytest.mark.parametrize("reset_turns", [(2, 30), (5, 45)])
def test_the_window_with_resets_sends_what_a_whole_log_read_sends(
    reset_turns: tuple[int, int], home: Path, tmp_path: Path
) -> None:
    """One session run twice in one store: read after the durable boundary (as the
    daemon does) and always over the whole log. The first /clear comes before any
    window, the second inside one; the boundary then moves past both."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    rng = random.Random(f"resets-{reset_turns}")
    store = open_store(home)
    windowed, whole = (store.create(str(workspace), n).session_id for n in ("w", "a"))
    windows, starts, resets = 0, set(), []
    for i in range(70):
        if i in reset_turns:  # /clear, recorded as the daemon records it
            resets.append(store.latest(windowed)[-1].seq + 1)
            for sid in (windowed, whole):
                bridge = small_bridge(store, sid, workspace)
                bridge.save_state(with_reset(bridge.state(), store.latest(sid)[-1].seq + 1))
        messages = step(rng, i)
        for sid in (windowed, whole):
            store.append_many(sid, messages)
        bridge = small_bridge(store, windowed, workspace)
        history = bridge.history()
        sent = bridge.assemble(history, i + 1)
        whole_bridge = small_bridge(store, whole, workspace)
        full = assemble(whole_bridge.input(store.messages(whole), i + 1))
        whole_bridge.save_state(full.state)
        assert normalized(sent, store, windowed) == normalized(full, store, whole), f"turn {i + 1}"
        listed = rows(sent)
        assert listed and listed == rows(full)[-len(listed) :], f"turn {i + 1}: episodes differ"
        windows += isinstance(history, HistoryWindow)
        boundary = bridge.state().boundary
        if boundary is not None:
            starts.add(boundary.start_seq)
    assert windows >= 30, "most turns read only the window"
    first, second = resets
    assert min(starts) > first, "the first reset lies before every window"
    assert any(s < second for s in starts) and max(starts) > second, "the window moved past it"
    assert [e.number for e in full.episodes][-1] == 3, "two resets: the third episode is open"


# ------------------------------------------------------------------ the method, the agent
FILLER = " ".join(["the quick brown fox jumps over the lazy dog and then"] * 4)
CARD = '[Episode archived] #1 "episode 1"'


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    for name in ("parser0", "parser1", "parser2", "cli0", "cli1"):
        (ws / f"{name}.txt").write_text("\n".join(f"{name}l{i} {FILLER}" for i in range(60)))
    return ws


def reads(*names: str) -> list[Reply]:
    return [Reply(tool_calls=[call("read_file", path=f"{n}.txt")]) for n in names]


SCRIPT = Script(
    steps=[
        *reads("parser0", "parser1", "parser2"),
        Reply(text="The parser is fixed."),
        *reads("cli0", "cli1"),
        Reply(text="The CLI flag is in."),
        Reply(text="More."),
    ],
    rules=[
        Rule(match="say hi", reply=Reply(text="hi")),
        Rule(
            match="slowly",
            fault=Fault(kind="slow_first_byte", delay_s=3.0),
            reply=Reply(text="done slowly"),
        ),
    ],
)


def states(listed: dict[str, list[dict[str, object]]]) -> list[tuple[object, object]]:
    return [(e["number"], e["state"]) for e in listed["episodes"]]


async def test_clear_closes_the_episode_durably_and_pressure_archives_it(
    home: Path, workspace: Path
) -> None:
    write_config(home, small_window(24_000))
    async with make_rig(SCRIPT, home, workspace) as rig:
        sid = await rig.session()
        nothing = await rig.call("bonsai/session/reset", sessionId=sid, kind="clear")
        assert "episode" not in nothing and "nothing to close" in nothing["message"]
        await rig.turn(sid, "say hi")
        idle = await rig.call("bonsai/session/reset", sessionId=sid, kind="start")
        assert "episode" not in idle and "no real work" in idle["message"]

        await rig.turn(sid, "Please fix the parser.")
        listed = await rig.call("bonsai/episodes/list", sessionId=sid)
        assert states(listed) == [(1, "open")], "no title call: one open episode"
        events = events_of(rig.c)
        seen = len(events.of("bonsai/ctx/changed"))
        closed = await rig.call("bonsai/session/reset", sessionId=sid, kind="clear")
        assert closed["episode"] == 1 and closed["kind"] == "clear"
        await events.wait_for(
            "bonsai/ctx/changed", lambda _: len(events.of("bonsai/ctx/changed")) > seen
        )
        again = await rig.call("bonsai/session/reset", sessionId=sid, kind="review")
        assert "episode" not in again and "already closed" in again["message"]

        await rig.restart()  # durable: the reset is in the session's state
        listed = await rig.call("bonsai/episodes/list", sessionId=sid)
        assert states(listed) == [(1, "closed")] and listed["episodes"][0]["archivable"]

        await rig.turn(sid, "Now add a CLI flag.")
        listed = await rig.call("bonsai/episodes/list", sessionId=sid)
        assert [s for _, s in states(listed)][-1] == "open" and len(listed["episodes"]) == 2
        assert CARD in rig.sent_text(), "under pressure the closed episode went to its card"
        assert "parser0l5 " not in rig.sent_text() and "cli0l5 " in rig.sent_text()
        assert states(listed)[0] == (1, "archived")
        turns = await rig.call("bonsai/ctx/get", sessionId=sid, view="turns")
        kinds = [e["kind"] for t in turns["turns"] for e in t["events"]]
        assert "reset" in kinds and "archive" in kinds


async def test_reset_errors_name_the_problem(home: Path, workspace: Path) -> None:
    async with make_rig(SCRIPT, home, workspace) as rig:
        sid = await rig.session()
        with pytest.raises(JsonRpcException, match="kind") as bad:
            await rig.call("bonsai/session/reset", sessionId=sid, kind="wipe")
        assert bad.value.code == -32602
        with pytest.raises(JsonRpcException, match="no session"):
            await rig.call("bonsai/session/reset", sessionId="s_missing", kind="clear")
        turn = await rig.send(sid, "please answer slowly")
        await asyncio.sleep(0.5)
        with pytest.raises(JsonRpcException, match="a turn is running") as busy:
            await rig.call("bonsai/session/reset", sessionId=sid, kind="clear")
        assert busy.value.code == -32009
        await rig.finished(turn)


async def test_a_fork_keeps_the_reset_in_its_own_numbering(home: Path, workspace: Path) -> None:
    async with make_rig(SCRIPT, home, workspace) as rig:
        sid = await rig.session()
        await rig.turn(sid, "Please fix the parser.")
        closed = await rig.call("bonsai/session/reset", sessionId=sid, kind="clear")
        assert closed["episode"] == 1
        forked = await rig.call("bonsai/session/fork", sessionId=sid)
        fid = forked["session"]["sessionId"]
        listed = await rig.call("bonsai/episodes/list", sessionId=fid)
        assert states(listed) == [(1, "closed")], "the copy's episode is closed like the source's"
