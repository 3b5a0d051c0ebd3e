"""Every tree operation through a real daemon, across a restart, against the simulator."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from bonsai.sim import Script
from bonsai.sim.script import Reply
from bonsai_testing import events_of
from episodes.rig import Rig, make_rig


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def by_text(tree: dict[str, Any], rig_log: list[dict[str, Any]], text: str) -> str:
    """The node id of the logged message whose content is ``text``."""
    ids = {n["nodeId"] for n in tree["nodes"]}
    return next(m["messageId"] for m in rig_log if m["content"] == text and m["messageId"] in ids)


async def log_of(rig: Rig, sid: str) -> list[dict[str, Any]]:
    return list((await rig.call("bonsai/session/attach", sessionId=sid))["messages"])


async def test_tree_operations_shape_what_the_model_sees_and_survive_restart(
    home: Path, workspace: Path
) -> None:
    async with make_rig(Script(), home, workspace) as rig:
        sid = await rig.session()
        await rig.turn(sid, "first question")
        await rig.turn(sid, "second question")
        tree = await rig.call("bonsai/tree/get", sessionId=sid)
        assert [n["kind"] for n in tree["nodes"]] == ["question", "answer"] * 2
        assert tree["activePath"] == [n["nodeId"] for n in tree["nodes"]]
        assert all(n["tokens"] > 0 for n in tree["nodes"])
        assert tree["pathTokens"] == tree["nodes"][-1]["branchTokens"]
        log = await log_of(rig, sid)
        q1, a1, q2, a2 = (m["messageId"] for m in log)

        # fork: continue from the first answer; the model sees only that branch
        tree = await rig.call("bonsai/tree/fork", sessionId=sid, nodeId=a1)
        assert tree["forkPoint"] == a1 and tree["activeLeaf"] == a2
        await rig.turn(sid, "branch question")
        sent = rig.sent_text()
        assert "first question" in sent and "branch question" in sent
        assert "second question" not in sent, "a forked branch assembles only its own path"
        tree = await rig.call("bonsai/tree/get", sessionId=sid)
        log = await log_of(rig, sid)
        q3 = by_text(tree, log, "branch question")
        a3 = tree["activeLeaf"]
        assert {n["nodeId"]: n.get("parentId") for n in tree["nodes"]}[q3] == a1
        assert "forkPoint" not in tree

        # compare the two branches
        side = await rig.call("bonsai/tree/compare", sessionId=sid, a=a2, b=a3)
        assert side["ancestorId"] == a1
        assert [m["nodeId"] for m in side["a"]["messages"]] == [q2, a2]
        assert [m["nodeId"] for m in side["b"]["messages"]] == [q3, a3]
        assert side["a"]["tokens"] == sum(m["tokens"] for m in side["a"]["messages"])
        assert side["a"]["pathTokens"] > side["a"]["tokens"]

        # jump back to the old leaf: new messages continue there
        tree = await rig.call("bonsai/tree/jump", sessionId=sid, nodeId=a2)
        assert tree["activePath"] == [q1, a1, q2, a2]
        await rig.turn(sid, "back on the main line")
        assert "second question" in rig.sent_text() and "branch question" not in rig.sent_text()

        # hide the branch into the recycle bin, restore it, move it under the main line
        tree = await rig.call("bonsai/tree/hide", sessionId=sid, nodeId=q3)
        assert tree["recycleBin"] == [q3]
        states = {n["nodeId"]: n["state"] for n in tree["nodes"]}
        assert states[q3] == states[a3] == "hidden" and states[q2] == "visible"
        tree = await rig.call("bonsai/tree/restore", sessionId=sid, nodeId=q3)
        assert tree["recycleBin"] == []
        tree = await rig.call("bonsai/tree/reparent", sessionId=sid, nodeId=q3, parentId=a2)
        parents = {n["nodeId"]: n.get("parentId") for n in tree["nodes"]}
        assert parents[q3] == a2
        before = tree

        await rig.restart()
        after = await rig.call("bonsai/tree/get", sessionId=sid)
        assert after == before, "the tree is the log plus stored operations"


async def test_refused_operations_are_clear_errors(home: Path, workspace: Path) -> None:
    async with make_rig(Script(), home, workspace) as rig:
        sid = await rig.session()
        await rig.turn(sid, "hello")
        tree = await rig.call("bonsai/tree/get", sessionId=sid)
        q1, a1 = (n["nodeId"] for n in tree["nodes"])
        with pytest.raises(JsonRpcException, match="cycle"):
            await rig.call("bonsai/tree/reparent", sessionId=sid, nodeId=q1, parentId=a1)
        with pytest.raises(JsonRpcException, match="no node"):
            await rig.call("bonsai/tree/jump", sessionId=sid, nodeId="m_nope")
        with pytest.raises(JsonRpcException, match="not in the recycle bin"):
            await rig.call("bonsai/tree/restore", sessionId=sid, nodeId=a1)
        assert await rig.call("bonsai/tree/get", sessionId=sid) == tree, "nothing changed"


async def test_a_cancelled_turn_leaves_the_tree_as_it_was(home: Path, workspace: Path) -> None:
    script = Script(steps=[Reply(text="short"), Reply(text="word " * 400)], latency_ms=20)
    async with make_rig(script, home, workspace) as rig:
        sid = await rig.session()
        await rig.turn(sid, "hello")
        q1 = (await rig.call("bonsai/tree/get", sessionId=sid))["nodes"][0]["nodeId"]
        before = await rig.call("bonsai/tree/fork", sessionId=sid, nodeId=q1)
        turn_id = await rig.send(sid, "a question I will cancel")
        await events_of(rig.c).wait_for("bonsai/chat/event", lambda p: p["kind"] == "delta")
        with pytest.raises(JsonRpcException, match="turn is running"):
            await rig.call("bonsai/tree/jump", sessionId=sid, nodeId=q1)
        await asyncio.sleep(0.2)
        assert (await rig.call("bonsai/chat/cancel", sessionId=sid))["cancelled"]
        await rig.finished(turn_id)
        after = await rig.call("bonsai/tree/get", sessionId=sid)
        assert after == before, "no node added, the fork still pending"
        await rig.turn(sid, "the real follow-up")
        sent = rig.sent_text()
        assert "the real follow-up" in sent and "I will cancel" not in sent
        assert "short" not in sent, "the fork point (the first question) held"
