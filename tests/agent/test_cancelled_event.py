"""A cancel is its own chat event, ``cancelled``, not an error: for the clients that say
they know it (``initializationOptions.chatEventKinds``). A client that does not (an older
editor extension) still gets the ``error`` it knew, so its turn still ends."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from bonsai.cli.client import INITIALIZE
from bonsai.protocol.models import LATER_CHAT_EVENT_KINDS
from bonsai.sim import Script
from bonsai.sim.runner import SimulatorThread
from bonsai.sim.script import Reply
from bonsai_testing import BONSAI, bonsai_env, close_client, events_of, rpc, sim_env, start_client

CHAT = "bonsai/chat/event"
ENDS = ("done", "error", "cancelled")


async def _end(client: Any, turn_id: str) -> dict[str, Any]:
    return await events_of(client).wait_for(  # type: ignore[no-any-return]
        CHAT, lambda p: p["turnId"] == turn_id and p["kind"] in ENDS, timeout=60
    )


@asynccontextmanager
async def _two_clients(sim: SimulatorThread, home: Path, workspace: Path) -> AsyncIterator[Any]:
    """A client that knows ``cancelled`` and an older one, both on one new session."""
    env = sim_env(home, sim.openai_base_url)
    knows = await start_client(
        [*BONSAI, "connect"], env, {"client": "e2e", "chatEventKinds": ["cancelled"]}
    )
    older = await start_client([*BONSAI, "connect"], env, {"client": "e2e"})
    try:
        made = await rpc(knows, "bonsai/session/create", {"workspace": str(workspace)})
        for client in (knows, older):
            await rpc(client, "bonsai/session/attach", {"sessionId": made["sessionId"]})
        yield knows, older, made["sessionId"]
    finally:
        for client in (knows, older):
            await close_client(client)


async def test_a_cancel_is_its_own_event_and_an_older_client_still_sees_its_turn_end(
    home: Path, workspace: Path
) -> None:
    script = Script(steps=[Reply(text="word " * 400), Reply(text="next answer")], latency_ms=20)
    with SimulatorThread(script) as sim:
        async with _two_clients(sim, home, workspace) as (knows, older, sid):
            sent = await rpc(knows, "bonsai/chat/send", {"sessionId": sid, "text": "talk"})
            turn_id = sent["turnId"]
            await events_of(knows).wait_for(CHAT, lambda p: p["kind"] == "delta", timeout=60)
            assert (await rpc(older, "bonsai/chat/cancel", {"sessionId": sid}))["cancelled"]
            new, old = await _end(knows, turn_id), await _end(older, turn_id)
            assert {k: new[k] for k in ("kind", "sessionId", "turnId")} == {
                "kind": "cancelled",
                "sessionId": sid,
                "turnId": turn_id,
            }
            assert (old["kind"], old["message"]) == ("error", "turn cancelled")
            assert old["seq"] == new["seq"], "the same event, in the older shape"
            said = [p["kind"] for p in events_of(knows).of(CHAT) if p["turnId"] == turn_id]
            assert "error" not in said, "the cancel is not also an error"
            again = await rpc(knows, "bonsai/chat/send", {"sessionId": sid, "text": "go on"})
            assert (await _end(knows, again["turnId"]))["kind"] == "done", "the session goes on"


async def test_a_queued_turn_cancelled_ends_with_cancelled_and_the_queue_moves_on(
    home: Path, workspace: Path
) -> None:
    """A turn cancelled while it waits behind a running one ends as a running one does
    (every client gets its end, so no spinner runs on) and the queue moves on."""
    script = Script(steps=[Reply(text="word " * 100), Reply(text="third answer")], latency_ms=20)
    with SimulatorThread(script) as sim:
        async with _two_clients(sim, home, workspace) as (knows, older, sid):
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


def test_every_client_here_names_every_later_kind() -> None:
    root = Path(__file__).resolve().parents[2]
    assert tuple(INITIALIZE["initializationOptions"]["chatEventKinds"]) == LATER_CHAT_EVENT_KINDS
    quoted = ", ".join(f'"{kind}"' for kind in LATER_CHAT_EVENT_KINDS)
    lua = (root / "extensions/neovim/lua/bonsai/client.lua").read_text()
    assert f"chatEventKinds = {{ {quoted} }}" in lua, "the Neovim plugin"
    ts = (root / "extensions/vscode/src/rpc/connection.ts").read_text()
    assert f"chatEventKinds: [{quoted}]" in ts, "the VS Code extension"


@pytest.mark.parametrize("kinds", ["cancelled", [1, None, {"x": 1}], {"cancelled": True}])
async def test_a_malformed_chat_event_kinds_names_none_and_is_no_error(
    home: Path, kinds: Any
) -> None:
    client = await start_client(
        [*BONSAI, "serve", "--stdio"], bonsai_env(home), {"chatEventKinds": kinds}
    )
    try:
        assert (await rpc(client, "bonsai/daemon/status"))["pid"] > 0
    finally:
        await close_client(client)
