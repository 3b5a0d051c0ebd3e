"""A real daemon (``bonsai serve --stdio``) driven by pytest-lsp against the simulator.

Shared by the episode and tree end-to-end tests (import it as ``episodes.rig``).
The rig can restart the daemon on the same home, database and simulator.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pytest_lsp import LanguageClient

from bonsai.sim import Script
from bonsai.sim.runner import run_simulator
from bonsai.sim.script import ToolCallSpec
from bonsai_testing import BONSAI, bonsai_env, close_client, events_of, rpc, start_client
from episodes.episode_helpers import PRESSURE_KEYS


def call(tool: str, call_id: str | None = None, **arguments: Any) -> ToolCallSpec:
    return ToolCallSpec(name=tool, arguments=dict(arguments), id=call_id)


def write_config(home: Path, config: dict[str, Any]) -> None:
    (home / "config.json").write_text(json.dumps(config))


def small_window(window: int, reserve: int = 2_000) -> dict[str, Any]:
    """A config giving the simulated model a small window, so pressure comes early."""
    row = {"family": "openai", "context_window": window, "max_output": reserve}
    return {
        "providers": {"models": {"gpt-4o-mini": row}},
        "context": {"output_reserve": reserve, **PRESSURE_KEYS},
        "repomap": {"enabled": False},
    }


class Rig:
    def __init__(self, sim: Any, env: dict[str, str], workspace: Path, home: Path) -> None:
        self.sim, self.env, self.workspace, self.home = sim, env, workspace, home
        self.client: LanguageClient | None = None
        self.sessions: list[str] = []

    @property
    def c(self) -> LanguageClient:
        assert self.client is not None
        return self.client

    async def start(self, *, attach: bool = False) -> None:
        """Start a daemon; ``attach`` attaches the rig's sessions again."""
        self.client = await start_client([*BONSAI, "serve", "--stdio"], self.env)
        self.client.feature("bonsai/approval/request")(lambda params: {"approved": True})
        for sid in self.sessions if attach else []:
            await self.call("bonsai/session/attach", sessionId=sid)

    async def stop(self) -> None:
        await close_client(self.c)

    async def restart(self) -> None:
        """A new daemon on the same home and database."""
        await self.stop()
        await self.start(attach=True)

    async def call(self, method: str, **params: Any) -> Any:
        return await rpc(self.c, method, params)

    async def session(self) -> str:
        sid = (await self.call("bonsai/session/create", workspace=str(self.workspace)))["sessionId"]
        await self.call("bonsai/session/attach", sessionId=sid)
        self.sessions.append(sid)
        return sid

    async def send(self, sid: str, text: str) -> str:
        return str((await self.call("bonsai/chat/send", sessionId=sid, text=text))["turnId"])

    async def finished(self, turn_id: str, timeout: float = 30) -> list[dict[str, Any]]:
        events = events_of(self.c)
        await events.wait_for(
            "bonsai/chat/event",
            lambda p: p["turnId"] == turn_id and p["kind"] in ("done", "error"),
            timeout,
        )
        return [p for p in events.of("bonsai/chat/event") if p["turnId"] == turn_id]

    async def turn(self, sid: str, text: str) -> list[dict[str, Any]]:
        events = await self.finished(await self.send(sid, text))
        assert events[-1]["kind"] == "done", events[-1]
        return events

    def sent(self, index: int = -1) -> list[dict[str, Any]]:
        """The messages of a request the simulator received."""
        return list(self.sim.requests[index].body["messages"])

    def sent_text(self, index: int = -1) -> str:
        return "\n".join(str(m.get("content")) for m in self.sent(index))


@contextlib.asynccontextmanager
async def make_rig(script: Script, home: Path, workspace: Path, **env: str) -> AsyncIterator[Rig]:
    async with run_simulator(script) as sim:
        settings = {
            "BONSAI_PROVIDER": "sim",
            "BONSAI_BASE_URL": sim.openai_base_url,
            "BONSAI_MODEL": "gpt-4o-mini",
            **env,
        }
        rig = Rig(sim, bonsai_env(home, **settings), workspace, home)
        await rig.start()
        try:
            yield rig
        finally:
            await close_client(rig.c)
