"""Every foundation method, driven by pytest-lsp over ``bonsai serve --stdio``."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from bonsai_testing import BONSAI, bonsai_env, close_client, rpc, start_client


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def refusing_client(
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[LanguageClient]:
    """One daemon for every refused request: a refusal changes nothing, so each case
    meets the daemon as it started (and one that broke it fails every case after)."""
    home = tmp_path_factory.mktemp("refusals") / "home"
    home.mkdir()
    client = await start_client([*BONSAI, "serve", "--stdio"], bonsai_env(home))
    yield client
    await close_client(client)


async def test_status_reports_the_daemon(stdio_client: LanguageClient, home) -> None:
    status = await rpc(stdio_client, "bonsai/daemon/status")
    assert status["version"]
    assert status["clients"] == 1
    assert status["sessions"] == 0
    assert status["dbPath"] == str(home / "bonsai.db")
    assert status["uptimeS"] >= 0


async def test_session_lifecycle(stdio_client: LanguageClient, tmp_path) -> None:
    ws = str(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    created = await rpc(stdio_client, "bonsai/session/create", {"workspace": ws, "title": "first"})
    sid = created["sessionId"]
    other = await rpc(
        stdio_client, "bonsai/session/create", {"workspace": str(tmp_path / "elsewhere")}
    )

    listed = await rpc(stdio_client, "bonsai/session/list", {"workspace": ws})
    assert [s["sessionId"] for s in listed["sessions"]] == [sid]
    everything = await rpc(stdio_client, "bonsai/session/list")
    assert {s["sessionId"] for s in everything["sessions"]} == {sid, other["sessionId"]}

    appended = await rpc(
        stdio_client,
        "bonsai/session/append",
        {"sessionId": sid, "role": "user", "content": "héllo\n"},
    )
    assert appended["message"]["content"] == "héllo\n"

    attached = await rpc(stdio_client, "bonsai/session/attach", {"sessionId": sid})
    assert attached["session"]["title"] == "first"
    assert attached["session"]["messageCount"] == 1
    assert [(m["role"], m["content"]) for m in attached["messages"]] == [("user", "héllo\n")]

    await rpc(stdio_client, "bonsai/session/rename", {"sessionId": sid, "title": "renamed"})
    listed = await rpc(stdio_client, "bonsai/session/list", {"workspace": ws})
    assert listed["sessions"][0]["title"] == "renamed"

    await rpc(stdio_client, "bonsai/session/detach", {"sessionId": sid})
    await rpc(stdio_client, "bonsai/session/delete", {"sessionId": sid})
    listed = await rpc(stdio_client, "bonsai/session/list", {"workspace": ws})
    assert listed["sessions"] == []
    with pytest.raises(JsonRpcException) as info:
        await rpc(stdio_client, "bonsai/session/attach", {"sessionId": sid})
    assert "no session" in str(info.value)


async def test_attached_client_receives_its_own_events(
    stdio_client: LanguageClient, tmp_path
) -> None:
    from bonsai_testing import events_of

    workspace = {"workspace": str(tmp_path)}
    sid = (await rpc(stdio_client, "bonsai/session/create", workspace))["sessionId"]
    await rpc(stdio_client, "bonsai/session/attach", {"sessionId": sid})
    await rpc(
        stdio_client, "bonsai/session/append", {"sessionId": sid, "role": "user", "content": "x"}
    )
    event = await events_of(stdio_client).wait_for("bonsai/session/event")
    assert event["kind"] == "messageAppended"
    assert event["message"]["content"] == "x"


@pytest.mark.parametrize(
    ("method", "params", "code", "fragment"),
    [
        ("bonsai/session/create", {}, -32602, "workspace: Field required"),
        ("bonsai/session/create", {"workspace": "/w", "bogus": 1}, -32602, "bogus: unknown field"),
        ("bonsai/session/create", {"workspace": 42}, -32602, "workspace"),
        (
            "bonsai/session/append",
            {"sessionId": "s", "role": "wizard", "content": ""},
            -32602,
            "role",
        ),
        ("bonsai/session/rename", {"sessionId": "nope", "title": "t"}, -32004, "no session"),
        (
            "bonsai/session/append",
            {"sessionId": "s", "role": "tool", "content": "x"},
            -32602,
            "with its call",
        ),
        ("bonsai/no/such", {}, -32601, "bonsai/no/such"),
    ],
)
@pytest.mark.asyncio(loop_scope="module")
async def test_errors_name_the_problem(
    refusing_client: LanguageClient, method: str, params: dict, code: int, fragment: str
) -> None:
    with pytest.raises(JsonRpcException) as info:
        await rpc(refusing_client, method, params)
    assert info.value.code == code
    assert fragment in str(info.value.message)
    # the daemon is still serving
    assert (await rpc(refusing_client, "bonsai/daemon/status"))["clients"] == 1
    assert (await rpc(refusing_client, "bonsai/daemon/status"))["sessions"] == 0, "none made"


async def test_create_refuses_a_workspace_that_is_not_a_folder(
    stdio_client: LanguageClient, tmp_path
) -> None:
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a folder\n")
    for workspace, what in (
        (tmp_path / "no" / "such" / "project", "does not exist"),
        (a_file, "is not a directory"),
    ):
        with pytest.raises(JsonRpcException) as info:
            await rpc(stdio_client, "bonsai/session/create", {"workspace": str(workspace)})
        assert info.value.code == -32602
        message = str(info.value.message)
        assert str(workspace) in message and what in message
        assert "\n" not in message
    assert not (tmp_path / "no").exists(), "no folder is created at the typo"
    assert a_file.read_text() == "not a folder\n"
    assert (await rpc(stdio_client, "bonsai/session/list"))["sessions"] == []
    assert (await rpc(stdio_client, "bonsai/daemon/status"))["sessions"] == 0


async def test_config_get_reports_effective_settings(stdio_client: LanguageClient) -> None:
    config = await rpc(stdio_client, "bonsai/config/get")
    assert config["effective"]["context"]["gc_trigger"] == 0.40  # the default preset, balanced
    assert "api_key" not in config["effective"]["providers"]
