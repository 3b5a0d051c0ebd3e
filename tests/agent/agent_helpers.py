"""Helpers for agent tests: a pytest-lsp client on a real daemon talking to the simulator."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pytest_lsp import LanguageClient

from bonsai.sim import Script
from bonsai.sim.runner import run_simulator
from bonsai.sim.script import Reply, ToolCallSpec
from bonsai_testing import BONSAI, bonsai_env, close_client, events_of, plain, rpc, start_client


def call(tool: str, call_id: str | None = None, **arguments: Any) -> ToolCallSpec:
    return ToolCallSpec(name=tool, arguments=dict(arguments), id=call_id)


def bulky_steps(count: int, width: int) -> list[Reply]:
    """``count`` agent steps each running ``seq`` over ``width`` numbers (bulky
    output that fills a small window), then a final answer."""
    steps = [
        Reply(text=f"Step {i}.", tool_calls=[call("bash", command=f"seq {i} {i + width}")])
        for i in range(count)
    ]
    return [*steps, Reply(text="All done.")]


class Rig:
    def __init__(self, sim: Any, client: LanguageClient, workspace: Path, home: Path) -> None:
        self.sim, self.client, self.workspace, self.home = sim, client, workspace, home
        self.approvals: list[dict[str, Any]] = []
        self.approve = True

    async def session(self) -> str:
        sid = (await rpc(self.client, "bonsai/session/create", {"workspace": str(self.workspace)}))[
            "sessionId"
        ]
        await rpc(self.client, "bonsai/session/attach", {"sessionId": sid})
        return sid

    async def turn(self, sid: str, text: str, timeout: float = 30) -> tuple[str, list[dict]]:
        turn_id = (await rpc(self.client, "bonsai/chat/send", {"sessionId": sid, "text": text}))[
            "turnId"
        ]
        events = events_of(self.client)
        await events.wait_for(
            "bonsai/chat/event",
            lambda p: p["turnId"] == turn_id and p["kind"] in ("done", "error"),
            timeout,
        )
        return turn_id, [p for p in events.of("bonsai/chat/event") if p["turnId"] == turn_id]


@contextlib.asynccontextmanager
async def make_rig(
    script: Script, home: Path, workspace: Path, *, keep_alive: bool = True, **env: str
) -> AsyncIterator[Rig]:
    """``keep_alive=False``: a simulator that closes each connection after its response."""
    async with run_simulator(script, keep_alive=keep_alive) as sim:
        settings = {
            "BONSAI_PROVIDER": "sim",
            "BONSAI_BASE_URL": sim.openai_base_url,
            "BONSAI_MODEL": "gpt-4o-mini",
            **env,
        }
        environment = bonsai_env(home, **settings)
        client = await start_client([*BONSAI, "serve", "--stdio"], environment)
        rig = Rig(sim, client, workspace, home)

        def on_approval(params: Any) -> dict[str, bool]:
            rig.approvals.append(plain(params))
            return {"approved": rig.approve}

        client.feature("bonsai/approval/request")(on_approval)
        try:
            yield rig
        finally:
            await close_client(client)
