"""A turn cancelled while it waits in the queue behind a running one ends as a running
one does: every client gets its ``cancelled`` event (an older client its ``error``), so
no spinner runs on, and the queue moves on to the next turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bonsai.sim import Script
from bonsai.sim.runner import SimulatorThread
from bonsai.sim.script import Reply
from bonsai_testing import BONSAI, close_client, events_of, rpc, sim_env, start_client

CHAT = "bonsai/chat/event"
ENDS = ("done", "error", "cancelled")


async def _end(client: Any, turn_id: str) -> dict[str, Any]:
    return await events_of(client).wait_for(  # type: ignore[no-any-return]
        CHAT, lambda p: p["turnId"] == turn_id and p["kind"] in ENDS, timeout=60
    )


async def test_a_queued_turn_cancelled_ends_with_cancelled_and_the_queue_moves_on(
    home: Path, workspace: Path
) -> None:
    script = Script(steps=[Reply(text="word " * 100), Reply(text="third answer")], latency_ms=20)
    with SimulatorThread(script) as sim:
        env = sim_env(home, sim.openai_base_url)
        knows = await start_client(
            [*BONSAI, "connect"], env, {"client": "e2e", "chatEventKinds": ["cancelled"]}
        )
        older = await start_client([*BONSAI, "connect"], env, {"client": "e2e"})
        try:
            sid = (await rpc(knows, "bonsai/session/create", {"workspace": str(workspace)}))[
                "sessionId"
            ]
            for client in (knows, older):
                await rpc(client, "bonsai/session/attach", {"sessionId": sid})
            turns = []
            for text in ("first", "second", "third"):
                sent = await rpc(knows, "bonsai/chat/send", {"sessionId": sid, "text": text})
                turns.append(sent["turnId"])
            first, queued, third = turns
            await events_of(knows).wait_for(CHAT, lambda p: p["kind"] == "delta", timeout=60)
            cancel = {"sessionId": sid, "turnId": queued}
            assert (await rpc(older, "bonsai/chat/cancel", cancel))["cancelled"]
            new, old = await _end(knows, queued), await _end(older, queued)
            assert (new["kind"], new["sessionId"]) == ("cancelled", sid)
            assert (old["kind"], old["message"]) == ("error", "turn cancelled")
            assert (await _end(knows, first))["kind"] == "done", "the running turn goes on"
            assert (await _end(knows, third))["kind"] == "done", "the queue moves on"
            said = [p["kind"] for p in events_of(knows).of(CHAT) if p["turnId"] == queued]
            assert said == ["cancelled"], said
            bodies = [str(r.body.get("messages")) for r in sim.requests]
            assert len(bodies) == 2 and "second" not in bodies[1], "the cancelled one never ran"
        finally:
            for client in (knows, older):
                await close_client(client)
