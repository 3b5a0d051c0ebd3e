"""bonsai/rules/* over real JSON-RPC: CRUD, clear errors, notifications, restarts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from bonsai.sim import Script
from bonsai_testing import events_of
from episodes.rig import Rig, make_rig


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


async def texts(rig: Rig, **scope: str) -> list[tuple[str, str, bool]]:
    listed = await rig.call("bonsai/rules/list", **scope)
    return [(r["text"], r["source"], r["enabled"]) for r in listed["rules"]]


async def refused(rig: Rig, method: str, **params: Any) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as caught:
        await rig.call(method, **params)
    return caught.value


async def test_add_edit_toggle_delete_and_survive_a_restart(home: Path, workspace: Path) -> None:
    async with make_rig(Script(), home, workspace) as rig:
        sid = await rig.session()
        ws = str(workspace)
        assert await texts(rig, workspace=ws) == []
        added = (await rig.call("bonsai/rules/add", sessionId=sid, text="Always use pnpm"))["rule"]
        assert added["source"] == "user" and added["enabled"] and added["created"] > 0
        await rig.call("bonsai/rules/add", workspace=ws, text=" Never   touch generated files ")
        both = [("Always use pnpm", "user", True), ("Never touch generated files", "user", True)]
        assert await texts(rig, sessionId=sid) == both, "a session names its workspace's rules"

        edited = await rig.call("bonsai/rules/edit", id=added["id"], text="Always use pnpm 9")
        assert edited["rule"]["text"] == "Always use pnpm 9"
        await rig.call("bonsai/rules/edit", id=added["id"], enabled=False)
        changes = [p["change"] for p in events_of(rig.c).of("bonsai/rules/changed")]
        assert changes == ["added", "added", "edited", "edited"]
        last = events_of(rig.c).of("bonsai/rules/changed")[-1]
        assert last["workspace"] == str(workspace.resolve())
        assert [(r["text"], r["enabled"]) for r in last["rules"]] == [
            ("Always use pnpm 9", False),
            ("Never touch generated files", True),
        ]

        await rig.restart()
        assert await texts(rig, workspace=ws) == [
            ("Always use pnpm 9", "user", False),
            ("Never touch generated files", "user", True),
        ]
        await rig.call("bonsai/rules/delete", id=added["id"])
        assert await texts(rig, workspace=ws) == [("Never touch generated files", "user", True)]
        assert events_of(rig.c).of("bonsai/rules/changed")[-1]["change"] == "deleted"


async def test_bad_requests_get_clear_errors_and_change_nothing(
    home: Path, workspace: Path
) -> None:
    async with make_rig(Script(), home, workspace) as rig:
        ws = str(workspace)
        error = await refused(rig, "bonsai/rules/add", workspace=ws, text="   ")
        assert error.code == -32602 and "empty" in error.message
        error = await refused(rig, "bonsai/rules/add", workspace=ws, text="x" * 301)
        assert error.code == -32602 and "limit is 300" in error.message
        error = await refused(rig, "bonsai/rules/edit", id="r_nope", enabled=False)
        assert error.code == -32004 and "no rule" in error.message
        error = await refused(rig, "bonsai/rules/delete", id="r_nope")
        assert error.code == -32004
        error = await refused(rig, "bonsai/rules/list")
        assert error.code == -32602 and "sessionId or workspace" in error.message
        error = await refused(rig, "bonsai/rules/list", sessionId="s_gone")
        assert error.code == -32004
        error = await refused(rig, "bonsai/rules/add", workspace=ws, text="ok rule", tags=[])
        assert error.code == -32602 and "tags" in error.message
        rule = (await rig.call("bonsai/rules/add", workspace=ws, text="Prefer tabs"))["rule"]
        error = await refused(rig, "bonsai/rules/edit", id=rule["id"], text="")
        assert "empty" in error.message
        assert await texts(rig, workspace=ws) == [("Prefer tabs", "user", True)]
