"""A client that attaches mid-stream catches up on the events it missed, redacted as
every live event is: a provider key the model echoed is never in what it is sent."""

from __future__ import annotations

from pathlib import Path

from bonsai.sim import Script
from bonsai.sim.runner import run_simulator
from bonsai.sim.script import Reply
from bonsai_testing import BONSAI, bonsai_env, close_client, events_of, rpc, start_client

KEY = "echoed-provider-KEY-0123456789abcdef"


async def test_a_late_client_catches_up_on_redacted_events(home: Path, workspace: Path) -> None:
    words = ["Your", "key", "is", KEY, *(f"w{i}" for i in range(120))]
    script = Script(steps=[Reply(text=" ".join(words))], latency_ms=8)
    async with run_simulator(script) as sim:
        env = bonsai_env(
            home,
            BONSAI_PROVIDER="openai",
            OPENAI_API_KEY=KEY,
            BONSAI_BASE_URL=sim.openai_base_url,
            BONSAI_MODEL="gpt-4o-mini",
        )
        live = await start_client([*BONSAI, "connect"], env)
        late = None
        try:
            sid = (await rpc(live, "bonsai/session/create", {"workspace": str(workspace)}))[
                "sessionId"
            ]
            await rpc(live, "bonsai/session/attach", {"sessionId": sid})
            turn = (await rpc(live, "bonsai/chat/send", {"sessionId": sid, "text": "key?"}))[
                "turnId"
            ]
            await events_of(live).wait_for(
                "bonsai/chat/event",
                lambda p: p["kind"] == "delta" and "[REDACTED]" in p["text"],
            )
            late = await start_client([*BONSAI, "connect"], env)
            await rpc(late, "bonsai/session/attach", {"sessionId": sid})
            for client in (live, late):
                await events_of(client).wait_for(
                    "bonsai/chat/event", lambda p: p["turnId"] == turn and p["kind"] == "done"
                )
            texts = [
                "".join(e.get("text", "") for e in events_of(c).of("bonsai/chat/event"))
                for c in (live, late)
            ]
            assert texts[0] == texts[1], "the late client caught up on the whole reply"
            assert texts[1].startswith("Your key is [REDACTED] w0"), texts[1][:80]
            assert all(KEY not in text for text in texts)
        finally:
            for client in (live, late):
                if client is not None:
                    await close_client(client)
