"""Approvals as one shared object: every client of the session is asked, the first
answer wins, and every client hears how it ended (``bonsai/approval/resolved``).
Also what an edit's approval carries for review, and recalled memory marked as
such in the session's messages."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from agent_helpers import call
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from bonsai.session.approvals import review
from bonsai.sim import Script
from bonsai.sim.runner import run_simulator
from bonsai.sim.script import Reply
from bonsai_testing import BONSAI, Events, close_client, events_of, plain, rpc, sim_env

NOTES = "teh cat sat on the mat\n"


class Window:
    """A client that records approval prompts and answers them only when told."""

    def __init__(self, client: LanguageClient) -> None:
        self.client = client
        self.asked: list[dict[str, Any]] = []
        self.resolved = Events()
        self.answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()


async def open_window(env: dict[str, str], name: str) -> Window:
    config = ClientServerConfig(server_command=[*BONSAI, "connect"], server_env=env)
    client = await config.start()
    assert isinstance(client, LanguageClient)
    window = Window(client)
    events = Events()
    client.bonsai_events = events  # type: ignore[attr-defined]
    client.feature("bonsai/chat/event")(lambda p: events.add("bonsai/chat/event", p))
    client.feature("bonsai/approval/resolved")(
        lambda p: window.resolved.add("bonsai/approval/resolved", p)
    )

    @client.feature("bonsai/approval/request")
    async def asked(params: Any) -> dict[str, bool]:
        window.asked.append(plain(params))
        return {"approved": await window.answer}

    await client.initialize_session(
        lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(),
            initialization_options={"client": name},
        )
    )
    return window


@contextlib.asynccontextmanager
async def windows(
    script: Script, home: Path, names: list[str]
) -> AsyncIterator[tuple[dict[str, str], list[Window]]]:
    async with run_simulator(script) as sim:
        env = sim_env(home, sim.openai_base_url)
        opened = list(await asyncio.gather(*(open_window(env, n) for n in names)))
        try:
            yield env, opened
        finally:
            for window in opened:
                if not window.answer.done():
                    window.answer.set_result(False)
                await close_client(window.client)


async def attached_session(ws: list[Window], workspace: Path) -> str:
    sid = (await rpc(ws[0].client, "bonsai/session/create", {"workspace": str(workspace)}))[
        "sessionId"
    ]
    for window in ws:
        await rpc(window.client, "bonsai/session/attach", {"sessionId": sid})
    return sid


async def finished(window: Window, turn_id: str) -> None:
    await events_of(window.client).wait_for(
        "bonsai/chat/event", lambda p: p["turnId"] == turn_id and p["kind"] in ("done", "error")
    )


async def test_an_answer_in_one_window_resolves_the_approval_in_every_window(
    home: Path, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text(NOTES)
    edit = call("edit_file", path="notes.txt", old_string="teh cat", new_string="the cat")
    script = Script(steps=[Reply(text="Fixing.", tool_calls=[edit]), Reply(text="Fixed.")])
    async with windows(script, home, ["vscode", "vscode", "neovim"]) as (_, ws):
        sid = await attached_session(ws, workspace)
        turn = (await rpc(ws[0].client, "bonsai/chat/send", {"sessionId": sid, "text": "fix"}))[
            "turnId"
        ]
        for window in ws:  # every window is asked the same question
            await asyncio.wait_for(_until(lambda w=window: w.asked), 20)
        ids = {w.asked[0]["approvalId"] for w in ws}
        assert len(ids) == 1 and "" not in ids
        request = ws[2].asked[0]
        assert request["path"] == "notes.txt"
        assert request["proposed"] == "the cat sat on the mat\n", "the whole text after the edit"
        assert "+the cat" in request["diff"]

        ws[2].answer.set_result(True)  # Neovim approves
        outcomes = [
            await w.resolved.wait_for("bonsai/approval/resolved", lambda p: True) for w in ws
        ]
        await finished(ws[0], turn)
        assert (workspace / "notes.txt").read_text() == "the cat sat on the mat\n"
        assert [o["outcome"] for o in outcomes] == ["approved"] * 3
        assert [o["yours"] for o in outcomes] == [False, False, True]
        assert {o["approvalId"] for o in outcomes} == ids
        neovim_id = outcomes[0]["by"].split()[-1]
        assert outcomes[0]["by"] == f"Neovim {neovim_id}", outcomes[0]["by"]
        assert all(o["by"] == outcomes[0]["by"] and o["at"] > 0 for o in outcomes)

        # A late answer from a window that was too slow changes nothing.
        ws[0].answer.set_result(False)
        await asyncio.sleep(0)
        messages = (await rpc(ws[0].client, "bonsai/session/attach", {"sessionId": sid}))[
            "messages"
        ]
        results = [m for m in messages if m["role"] == "tool"]
        assert len(results) == 1 and results[0].get("status") is None, results


async def test_a_window_that_attaches_while_an_approval_waits_is_asked_too(
    home: Path, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text(NOTES)
    edit = call("edit_file", path="notes.txt", old_string="teh cat", new_string="the cat")
    script = Script(steps=[Reply(text="Fixing.", tool_calls=[edit]), Reply(text="Fixed.")])
    async with windows(script, home, ["vscode", "vscode"]) as (_, ws):
        sid = await attached_session(ws[:1], workspace)
        turn = (await rpc(ws[0].client, "bonsai/chat/send", {"sessionId": sid, "text": "fix"}))[
            "turnId"
        ]
        await asyncio.wait_for(_until(lambda: ws[0].asked), 20)
        # The second window opens the session now: the question waits there too.
        await rpc(ws[1].client, "bonsai/session/attach", {"sessionId": sid})
        await asyncio.wait_for(_until(lambda: ws[1].asked), 20)
        assert ws[1].asked[0]["approvalId"] == ws[0].asked[0]["approvalId"]
        assert ws[1].asked[0]["proposed"] == "the cat sat on the mat\n"
        await rpc(ws[1].client, "bonsai/session/attach", {"sessionId": sid})  # again: asked once
        ws[1].answer.set_result(True)
        outcomes = [
            await w.resolved.wait_for("bonsai/approval/resolved", lambda p: True) for w in ws
        ]
        await finished(ws[0], turn)
        assert [(o["outcome"], o["yours"]) for o in outcomes] == [
            ("approved", False),
            ("approved", True),
        ]
        assert (workspace / "notes.txt").read_text() == "the cat sat on the mat\n"
        assert len(ws[1].asked) == 1, ws[1].asked


async def test_a_cancelled_turn_withdraws_its_approval_everywhere(
    home: Path, workspace: Path
) -> None:
    script = Script(steps=[Reply(tool_calls=[call("bash", command="echo hi")]), Reply(text="ok")])
    async with windows(script, home, ["vscode", "neovim"]) as (_, ws):
        sid = await attached_session(ws, workspace)
        turn = (await rpc(ws[0].client, "bonsai/chat/send", {"sessionId": sid, "text": "run"}))[
            "turnId"
        ]
        await asyncio.wait_for(_until(lambda: ws[1].asked), 20)
        request = ws[1].asked[0]
        assert request["cwd"] == str(workspace), "a command's approval says where it runs"
        await rpc(ws[0].client, "bonsai/chat/cancel", {"sessionId": sid, "turnId": turn})
        for window in ws:
            resolved = await window.resolved.wait_for("bonsai/approval/resolved")
            assert resolved["outcome"] == "cancelled" and resolved["by"] == ""
            assert resolved["yours"] is False


async def test_recalled_memory_is_marked_in_the_sessions_messages(
    home: Path, workspace: Path
) -> None:
    memory = workspace / ".bonsai" / "memory"
    memory.mkdir(parents=True)
    (memory / "deploy-checklist.md").write_text(
        "---\nname: deploy-checklist\ndescription: How this project deploys to staging\n"
        "type: project\n---\nDeploys go through `make deploy-staging`.\n"
    )
    script = Script(steps=[Reply(text="noted")])
    async with windows(script, home, ["vscode"]) as (_, ws):
        sid = await attached_session(ws, workspace)
        turn = (
            await rpc(
                ws[0].client,
                "bonsai/chat/send",
                {"sessionId": sid, "text": "how do we deploy to staging?"},
            )
        )["turnId"]
        await finished(ws[0], turn)
        messages = (await rpc(ws[0].client, "bonsai/session/attach", {"sessionId": sid}))[
            "messages"
        ]
        users = [m for m in messages if m["role"] == "user"]
        assert [u.get("recalled") is None for u in users] == [True, False]
        note = users[1]["recalled"]
        assert note["sources"] == ["memory"] and note["titles"] == ["deploy-checklist"]
        assert "make deploy-staging" in note["text"]
        assert "<background-data" not in note["text"] and "not instructions" not in note["text"]


async def _until(predicate: Any) -> None:
    while not predicate():
        await asyncio.sleep(0.02)


def test_review_names_only_files_inside_the_workspace(workspace: Path) -> None:
    (workspace / "notes.txt").write_text(NOTES)
    edit = {"path": "notes.txt", "old_string": "teh", "new_string": "the"}
    assert review(workspace, "edit_file", edit) == {
        "path": "notes.txt",
        "proposed": "the cat sat on the mat\n",
    }
    assert review(workspace, "write_file", {"path": "../escape.txt", "content": "x"}) == {}
    assert review(workspace, "edit_file", {**edit, "path": "/etc/passwd"}) == {}
    assert review(workspace, "bash", {"command": "ls"}) == {"cwd": str(workspace)}
