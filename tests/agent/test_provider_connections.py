"""The daemon's provider connections kept across turns (issue 19): every turn and
session on one provider configuration shares one client and its kept connection
(counted where the simulator accepts them); a changed key gets a new client; a
server that closes each connection, and a cancelled turn, still leave the next turn
working. Real daemon over JSON-RPC, real simulator."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from agent_helpers import Rig, make_rig

from bonsai.sim import Script
from bonsai.sim.script import Reply
from bonsai_testing import events_of, rpc


def chat_requests(rig: Rig) -> list[tuple[int, str | None]]:
    """(connection, authorization as the simulator recorded it) of each chat request."""
    return [
        (r.connection, r.headers.get("authorization"))
        for r in rig.sim.requests
        if r.route == "openai"
    ]


def replies(count: int) -> Script:
    return Script(steps=[Reply(text=f"answer {i}") for i in range(count)])


async def test_turns_of_two_sessions_go_over_one_kept_connection(
    home: Path, workspace: Path
) -> None:
    async with make_rig(replies(3), home, workspace) as rig:
        first, second = await rig.session(), await rig.session()
        for sid in (first, second, first):
            _, events = await rig.turn(sid, "hello")
            assert events[-1]["kind"] == "done", events
        connections = {connection for connection, _ in chat_requests(rig)}
        assert len(chat_requests(rig)) == 3 and len(connections) == 1


async def test_a_changed_key_gets_a_new_client(home: Path, workspace: Path) -> None:
    config = home / "config.json"
    config.write_text(json.dumps({"providers": {"api_key": "sk-first-key"}}))
    async with make_rig(replies(3), home, workspace) as rig:
        sid = await rig.session()
        await rig.turn(sid, "one")
        await rig.turn(sid, "two")
        config.write_text(json.dumps({"providers": {"api_key": "sk-the-second-longer-key"}}))
        _, events = await rig.turn(sid, "three")
        assert events[-1]["kind"] == "done", events
        (c1, auth1), (c2, auth2), (c3, auth3) = chat_requests(rig)
        assert c1 == c2 and auth1 == auth2  # the same settings: the kept connection
        assert c3 != c2 and auth3 != auth2  # the new key: a new client, a new connection


async def test_a_server_that_closes_every_connection_still_serves_every_turn(
    home: Path, workspace: Path
) -> None:
    async with make_rig(replies(3), home, workspace, keep_alive=False) as rig:
        sid = await rig.session()
        for n in range(3):
            _, events = await rig.turn(sid, f"turn {n}")
            assert events[-1]["kind"] == "done", events
            assert all(e["kind"] != "retry" for e in events)  # nothing failed on the way
        assert [c for c, _ in chat_requests(rig)] == sorted({c for c, _ in chat_requests(rig)})
        assert len(chat_requests(rig)) == 3


async def test_a_cancelled_turn_leaves_the_kept_client_working(home: Path, workspace: Path) -> None:
    script = Script(steps=[Reply(text="word " * 400), Reply(text="next answer")], latency_ms=20)
    async with make_rig(script, home, workspace) as rig:
        sid = await rig.session()
        sent = await rpc(rig.client, "bonsai/chat/send", {"sessionId": sid, "text": "talk"})
        events = events_of(rig.client)
        await events.wait_for("bonsai/chat/event", lambda p: p["kind"] == "delta")
        await asyncio.sleep(0.2)
        assert (await rpc(rig.client, "bonsai/chat/cancel", {"sessionId": sid}))["cancelled"]
        await events.wait_for(
            "bonsai/chat/event",
            lambda p: p["turnId"] == sent["turnId"] and p["kind"] == "error",
        )
        _, after = await rig.turn(sid, "go on")
        assert after[-1]["kind"] == "done", after
        text = "".join(e.get("text", "") for e in after if e["kind"] == "delta")
        assert text == "next answer"  # none of the cancelled reply's rest read as this one
        (cancelled, _), (next_one, _) = chat_requests(rig)
        assert next_one != cancelled  # the half-read connection was closed, not reused
