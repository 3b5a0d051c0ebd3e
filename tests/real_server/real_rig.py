"""A real daemon (``bonsai serve --stdio``) pointed at a real local server."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pytest_lsp import LanguageClient

from bonsai_testing import BONSAI, bonsai_env, close_client, events_of, plain, rpc, start_client

READ_ONLY_POLICY = {
    "bash": "deny",
    "edit_file": "deny",
    "write_file": "deny",
}


def write_config(home: Path, **sections: dict[str, Any]) -> None:
    config: dict[str, Any] = {
        "context": {"output_reserve": 96, "summary_mode": "deterministic"},
        "tools": {"policy": READ_ONLY_POLICY},
        "repomap": {"enabled": False},
        "memory": {"enabled": False},
    }
    for name, values in sections.items():
        config[name] = {**config.get(name, {}), **values}
    (home / "config.json").write_text(json.dumps(config))


class RealRig:
    def __init__(self, client: LanguageClient, workspace: Path) -> None:
        self.client, self.workspace = client, workspace
        self.approvals: list[dict[str, Any]] = []

    async def session(self) -> str:
        created = await rpc(
            self.client, "bonsai/session/create", {"workspace": str(self.workspace)}
        )
        sid = str(created["sessionId"])
        await rpc(self.client, "bonsai/session/attach", {"sessionId": sid})
        return sid

    async def send(self, sid: str, text: str) -> str:
        sent = await rpc(self.client, "bonsai/chat/send", {"sessionId": sid, "text": text})
        return str(sent["turnId"])

    async def wait(self, turn_id: str, timeout: float = 120) -> list[dict[str, Any]]:
        events = events_of(self.client)
        await events.wait_for(
            "bonsai/chat/event",
            lambda p: p["turnId"] == turn_id and p["kind"] in ("done", "error"),
            timeout,
        )
        return [p for p in events.of("bonsai/chat/event") if p["turnId"] == turn_id]

    async def turn(self, sid: str, text: str, timeout: float = 120) -> list[dict[str, Any]]:
        return await self.wait(await self.send(sid, text), timeout)

    async def ledger(self, sid: str, view: str = "ledger") -> dict[str, Any]:
        result: dict[str, Any] = await rpc(
            self.client, "bonsai/ctx/get", {"sessionId": sid, "view": view}
        )
        return result

    async def log(self, sid: str) -> list[dict[str, Any]]:
        attached = await rpc(self.client, "bonsai/session/attach", {"sessionId": sid})
        return list(attached["messages"])


@contextlib.asynccontextmanager
async def real_rig(
    base_url: str, model: str | None, home: Path, workspace: Path
) -> AsyncIterator[RealRig]:
    """``model=None``: the user set only the provider and the base URL."""
    chosen = {"BONSAI_MODEL": model} if model else {}
    env = bonsai_env(home, BONSAI_PROVIDER="openai-compatible", BONSAI_BASE_URL=base_url, **chosen)
    client = await start_client([*BONSAI, "serve", "--stdio"], env)
    rig = RealRig(client, workspace)

    def on_approval(params: Any) -> dict[str, bool]:
        rig.approvals.append(plain(params))
        return {"approved": False}

    client.feature("bonsai/approval/request")(on_approval)
    try:
        yield rig
    finally:
        await close_client(client)


def text_of(events: list[dict[str, Any]]) -> str:
    return "".join(e.get("text") or "" for e in events if e["kind"] == "delta")


def assert_paired(messages: list[dict[str, Any]]) -> None:
    """Every tool call in the log has exactly one result, after it."""
    results = [m.get("toolCallId") for m in messages if m["role"] == "tool"]
    calls = [
        c["id"] for m in messages if m["role"] == "assistant" for c in m.get("toolCalls") or []
    ]
    assert sorted(calls) == sorted(results), (calls, results)
    assert len(set(calls)) == len(calls), f"tool call ids repeat: {calls}"
