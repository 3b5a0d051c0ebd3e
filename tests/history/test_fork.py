"""bonsai/session/fork: branching copies, not shares (real daemon, simulator)."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from agent.agent_helpers import call, make_rig
from bonsai.sim import Script
from bonsai.sim.script import Reply
from bonsai_testing import rpc


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def tool_results(events: list[dict]) -> list[dict]:
    return [e for e in events if e["kind"] == "toolResult"]


def rows(home: Path, sql: str, *args: object) -> int:
    conn = apsw.Connection(str(home / "bonsai.db"), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return int(conn.execute(sql, args).fetchone()[0])
    finally:
        conn.close()


async def test_a_fork_owns_copies_of_its_spilled_outputs(home: Path, workspace: Path) -> None:
    script = Script(
        steps=[
            Reply(tool_calls=[call("bash", "call_big", command="seq 1 30000")]),
            Reply(text="Ran it."),
            Reply(tool_calls=[call("read_tool_output", "r1", id="call_big", grep="29999")]),
            Reply(text="Found it in the fork."),
            Reply(tool_calls=[call("read_tool_output", "r2", id="call_big", grep="12345")]),
            Reply(text="Found it in the original."),
            Reply(tool_calls=[call("read_tool_output", "r3", id="call_big", grep="777")]),
            Reply(text="Still there."),
        ]
    )
    async with make_rig(script, home, workspace) as rig:
        sid = await rig.session()
        await rig.turn(sid, "count to thirty thousand")
        spilled = "SELECT count(*) FROM tool_outputs WHERE session_id = ?"
        assert rows(home, spilled, sid) == 1, "the long output was spilled"

        forked = (await rpc(rig.client, "bonsai/session/fork", {"sessionId": sid}))["session"]
        fid = forked["sessionId"]
        assert fid != sid and forked["messageCount"] == 4 and forked["title"].endswith("(fork)")
        assert rows(home, spilled, fid) == 1, "the fork has its own copy"
        await rpc(rig.client, "bonsai/session/attach", {"sessionId": fid})

        _, events = await rig.turn(fid, "find 29999")
        [result] = tool_results(events)
        assert not result["isError"] and "29999" in result["result"]
        _, events = await rig.turn(sid, "find 12345")
        [result] = tool_results(events)
        assert not result["isError"] and "12345" in result["result"]
        listed = (await rpc(rig.client, "bonsai/session/list", {}))["sessions"]
        counts = {s["sessionId"]: s["messageCount"] for s in listed}
        assert counts[sid] == counts[fid] == 8, "each turn went to its own session only"

        await rpc(rig.client, "bonsai/session/delete", {"sessionId": sid})
        assert rows(home, spilled, sid) == 0, "deleting a session deletes its spilled outputs"
        orphans = (
            "SELECT count(*) FROM tool_outputs WHERE session_id NOT IN (SELECT id FROM sessions)"
        )
        assert rows(home, orphans) == 0
        _, events = await rig.turn(fid, "is 777 still there")
        [result] = tool_results(events)
        assert not result["isError"] and "777" in result["result"], "the copy is intact"


async def test_a_fork_up_to_a_node_copies_that_path_and_its_state(
    home: Path, workspace: Path
) -> None:
    script = Script(steps=[Reply(text="First answer."), Reply(text="Second answer.")])
    async with make_rig(script, home, workspace) as rig:
        sid = await rig.session()
        await rig.turn(sid, "first question")
        await rig.turn(sid, "second question")
        history = (await rpc(rig.client, "bonsai/session/attach", {"sessionId": sid}))["messages"]
        first_answer = next(m for m in history if m["content"] == "First answer.")
        await rpc(
            rig.client, "bonsai/ctx/pin", {"sessionId": sid, "nodeId": first_answer["messageId"]}
        )

        params = {"sessionId": sid, "nodeId": first_answer["messageId"], "title": "from the start"}
        forked = (await rpc(rig.client, "bonsai/session/fork", params))["session"]
        assert forked["title"] == "from the start" and forked["messageCount"] == 2
        copied = await rpc(rig.client, "bonsai/session/attach", {"sessionId": forked["sessionId"]})
        texts = [m["content"] for m in copied["messages"]]
        assert texts == ["first question", "First answer."]
        ledger = await rpc(
            rig.client, "bonsai/ctx/get", {"sessionId": forked["sessionId"], "view": "ledger"}
        )
        states = {n["label"]: n["state"] for n in ledger["nodes"] if n["section"] == "messages"}
        assert "pinned" in states.values(), "the pin came along with the copied message"
