"""autoReflect end to end: a real daemon, the simulator, and a turn whose tests fail."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_helpers import Rig, call, make_rig

from bonsai.sim import Script
from bonsai.sim.script import Reply
from bonsai_testing import events_of, rpc

FAILING_TESTS = "echo 'E   assert 3 == 4'; echo '1 failed'; exit 1  # pytest stand-in"
QUESTION = "make parse() return 4"


def failing_turn_script(*after: Reply) -> Script:
    return Script(
        steps=[
            Reply(text="Running the tests.", tool_calls=[call("bash", command=FAILING_TESTS)]),
            Reply(text="Fixed it, all good."),
            *after,
        ]
    )


def config(home: Path, **tree: Any) -> None:
    (home / "config.json").write_text(json.dumps({"repomap": {"enabled": False}, **tree}))


async def offered(rig: Rig) -> dict[str, Any]:
    return dict(await events_of(rig.client).wait_for("bonsai/reflect/offered"))


async def test_failed_tests_are_offered_a_retry_that_runs_as_a_sibling_branch(
    home: Path, workspace: Path
) -> None:
    config(home)
    script = failing_turn_script(Reply(text="Second attempt, with the reflection."))
    async with make_rig(script, home, workspace) as rig:
        sid = await rig.session()
        await rig.turn(sid, QUESTION)
        offer = await offered(rig)
        assert offer["grade"]["kind"] == "tests_failing"
        assert offer["grade"]["severity"] == "medium"
        assert "$ " + FAILING_TESTS in offer["grade"]["evidence"]
        assert "assert 3 == 4" in offer["reflection"]
        assert offer["autoRetry"] is False, "bash needs approval: only the user retries"
        assert len(rig.sim.requests) == 2, "no retry started on its own"

        retry = await rpc(
            rig.client, "bonsai/reflect/retry", {"sessionId": sid, "offerId": offer["offerId"]}
        )
        events = events_of(rig.client)
        await events.wait_for(
            "bonsai/chat/event", lambda p: p["turnId"] == retry["turnId"] and p["kind"] == "done"
        )
        first = "\n".join(str(m.get("content")) for m in rig.sim.requests[2].body["messages"])
        assert QUESTION in first and "<reflection>" in first and "assert 3 == 4" in first
        assert "Fixed it, all good." not in first, "the retry does not see the failed branch"

        tree = await rpc(rig.client, "bonsai/tree/get", {"sessionId": sid})
        asked = [n for n in tree["nodes"] if n["kind"] == "question" and n["label"] == QUESTION]
        assert len(asked) == 2 and {n.get("parentId") for n in asked} == {None}, "siblings"
        assert any(p["op"] == "fork" for p in events.of("bonsai/tree/changed"))


async def test_an_offer_can_be_dismissed_once(home: Path, workspace: Path) -> None:
    config(home)
    async with make_rig(failing_turn_script(), home, workspace) as rig:
        sid = await rig.session()
        await rig.turn(sid, QUESTION)
        offer = await offered(rig)
        params = {"sessionId": sid, "offerId": offer["offerId"]}
        assert await rpc(rig.client, "bonsai/reflect/dismiss", params) == {}
        try:
            await rpc(rig.client, "bonsai/reflect/retry", params)
        except Exception as error:  # the offer is gone
            assert "no retry offer" in str(error)
        else:
            raise AssertionError("a dismissed offer cannot be retried")


async def test_auto_reflect_off_offers_nothing(home: Path, workspace: Path) -> None:
    config(home, tree={"auto_reflect": False})
    async with make_rig(failing_turn_script(Reply(text="next")), home, workspace) as rig:
        sid = await rig.session()
        await rig.turn(sid, QUESTION)
        await rig.turn(sid, "and now?")  # the first turn's hook has run by now
        assert events_of(rig.client).of("bonsai/reflect/offered") == []


async def test_without_tools_needing_approval_the_daemon_retries_once_on_its_own(
    home: Path, workspace: Path
) -> None:
    config(home, tools={"policy": {"bash": "allow", "edit_file": "allow", "write_file": "allow"}})
    script = failing_turn_script(
        Reply(text="Retrying.", tool_calls=[call("bash", command=FAILING_TESTS)]),
        Reply(text="Still failing."),
    )
    async with make_rig(script, home, workspace) as rig:
        sid = await rig.session()
        await rig.turn(sid, QUESTION)
        events = events_of(rig.client)
        await events.wait_for("bonsai/reflect/offered", lambda p: p["autoRetry"] is True)
        await events.wait_for(
            "bonsai/reflect/offered", lambda p: p["autoRetry"] is False, timeout=30
        )
        assert rig.approvals == [], "nothing asked for approval"
        retried = "\n".join(str(m.get("content")) for m in rig.sim.requests[2].body["messages"])
        assert "<reflection>" in retried
        assert len(events.of("bonsai/reflect/offered")) == 2, "a retry is not retried on its own"
