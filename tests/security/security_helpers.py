"""A real daemon over JSON-RPC with a scripted simulator, and where secrets could leak to.

Every attack test drives ``bonsai serve --stdio`` through a pytest-lsp client; the
provider is the loopback simulator, scripted to make the tool calls an attacker
would want. ``leaks`` gathers every place a byte could end up: what the
simulator received, the database files (with its WAL), the logs and every
notification a client saw.
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
from bonsai_testing import BONSAI, bonsai_env, close_client, events_of, plain, rpc, start_client


def call(tool: str, **arguments: Any) -> ToolCallSpec:
    return ToolCallSpec(name=tool, arguments=dict(arguments))


def raw_call(tool: str, arguments: str) -> ToolCallSpec:
    """A call whose arguments are sent as given (NUL bytes, wrong types)."""
    return ToolCallSpec(name=tool, arguments=arguments)


class Rig:
    def __init__(self, sim: Any, client: LanguageClient, workspace: Path, home: Path) -> None:
        self.sim, self.client, self.workspace, self.home = sim, client, workspace, home
        self.approvals: list[dict[str, Any]] = []

    async def session(self) -> str:
        created = await rpc(
            self.client, "bonsai/session/create", {"workspace": str(self.workspace)}
        )
        sid = str(created["sessionId"])
        await rpc(self.client, "bonsai/session/attach", {"sessionId": sid})
        return sid

    async def turn(self, sid: str, text: str, timeout: float = 60) -> list[dict[str, Any]]:
        sent = await rpc(self.client, "bonsai/chat/send", {"sessionId": sid, "text": text})
        turn_id = sent["turnId"]
        events = events_of(self.client)
        await events.wait_for(
            "bonsai/chat/event",
            lambda p: p["turnId"] == turn_id and p["kind"] in ("done", "error"),
            timeout,
        )
        return [p for p in events.of("bonsai/chat/event") if p["turnId"] == turn_id]

    def tool_results(self, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [e for e in events if e["kind"] == "toolResult"]

    async def status(self) -> dict[str, Any]:
        result: dict[str, Any] = await rpc(self.client, "bonsai/daemon/status", {})
        return result

    # ------------------------------------------------------------ where bytes go
    def requests_text(self) -> str:
        return "\n".join(json.dumps(r.body, ensure_ascii=False) for r in self.sim.requests)

    def stored_bytes(self) -> bytes:
        """The database and its WAL (and shared memory) as they are on disk."""
        return b"".join(p.read_bytes() for p in sorted(self.home.glob("bonsai.db*")) if p.is_file())

    def log_bytes(self) -> bytes:
        logs = self.home / "logs"
        return b"".join(p.read_bytes() for p in sorted(logs.rglob("*")) if p.is_file())

    def notifications_text(self) -> str:
        return json.dumps(events_of(self.client).items, ensure_ascii=False)

    def leaks(self, needle: str) -> list[str]:
        """Where ``needle`` shows up, by name (an empty list: nowhere)."""
        raw = needle.encode("utf-8")
        found = []
        if needle in self.requests_text():
            found.append("provider requests")
        if raw in self.stored_bytes():
            found.append("database files")
        if raw in self.log_bytes():
            found.append("logs")
        if needle in self.notifications_text():
            found.append("client notifications")
        return found


@contextlib.asynccontextmanager
async def make_rig(
    script: Script, home: Path, workspace: Path, *, policy: str = "allow", **env: str
) -> AsyncIterator[Rig]:
    """The daemon with every tool allowed (``policy``) so attacks need no approval."""
    (home / "config.json").write_text(
        json.dumps({"tools": {"policy": {t: policy for t in ("bash", "edit_file", "write_file")}}})
    )
    async with run_simulator(script) as sim:
        settings = {
            "BONSAI_PROVIDER": "sim",
            "BONSAI_BASE_URL": sim.openai_base_url,
            "BONSAI_MODEL": "gpt-4o-mini",
            **env,
        }
        client = await start_client([*BONSAI, "serve", "--stdio"], bonsai_env(home, **settings))
        rig = Rig(sim, client, workspace, home)

        def on_approval(params: Any) -> dict[str, bool]:
            rig.approvals.append(plain(params))
            return {"approved": True}

        client.feature("bonsai/approval/request")(on_approval)
        try:
            yield rig
        finally:
            await close_client(client)
