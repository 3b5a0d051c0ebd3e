"""A poll answered from its read callback checks the settings once
(``state.settings_read_once``): the server's facts, the kept-answer stamp and what the
view process is sent each asked ``Daemon.settings``, two ``stat`` calls of the config
files every time (about half of the loop's own CPU per poll under cProfile). Within the
span the first answer stands; after it, an edited config file is read again, and a
callback made inside the span (a context copied for later) does not keep it."""

from __future__ import annotations

import asyncio
import contextvars
import json
import socket
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

import bonsai.daemon.handlers  # noqa: F401  (registers the handlers)
from bonsai.daemon import state
from bonsai.daemon.rpc import Writer, serve_stream
from bonsai.daemon.state import Daemon, settings_read_once
from bonsai.domain import Message
from bonsai.services.store.db import open_database
from bonsai.session import views


def _project_config(workspace: Path, window: int) -> None:
    config = workspace / ".bonsai" / "config.json"
    config.parent.mkdir(exist_ok=True)
    config.write_text(json.dumps({"context": {"output_reserve": window}}))


@pytest.fixture
def daemon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Daemon:
    monkeypatch.setenv("BONSAI_PROVIDER", "sim")
    monkeypatch.setenv("BONSAI_MODEL", "gpt-4o-mini")
    monkeypatch.setenv("BONSAI_VIEW_PROCESS", "1")
    # no view computed ahead of a poll (tests/session/test_eager_views.py): this counts the
    # config reads of the poll itself, not those of a write's refresh 25 ms later
    monkeypatch.setattr(views, "WATCH_S", 0.0)
    db_path = tmp_path / "bonsai.db"
    return Daemon(tmp_path, open_database(db_path), db_path)


def test_within_the_span_the_settings_are_read_once_and_after_it_again(
    daemon: Daemon, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    _project_config(workspace, 1000)
    with settings_read_once():
        first = daemon.settings(str(workspace))
        _project_config(workspace, 2000)  # an edit mid-span (a poll is synchronous: none)
        assert daemon.settings(str(workspace)) is first, "checked once within the span"
        later = contextvars.copy_context()  # a callback's context, run after the span
    edited = daemon.settings(str(workspace))
    assert edited is not first, "after the span, the edited file is read again"
    assert edited.settings.context.output_reserve == 2000
    _project_config(workspace, 3000)
    again = later.run(daemon.settings, str(workspace))
    assert again.settings.context.output_reserve == 3000, "a copied context keeps no span"


def _frame(msg_id: int, method: str, params: dict[str, Any]) -> bytes:
    payload = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
    body = json.dumps(payload).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


async def _answer(reader: asyncio.StreamReader, msg_id: int) -> dict[str, Any]:
    while True:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
        length = int(head.split(b":")[1].split(b"\r\n")[0])
        message: dict[str, Any] = json.loads(await reader.readexactly(length))
        if message.get("id") == msg_id and "method" not in message:
            return message


@pytest.fixture
async def served(
    daemon: Daemon,
) -> AsyncIterator[tuple[asyncio.StreamReader, asyncio.StreamWriter]]:
    ours, theirs = socket.socketpair()
    server_reader, server_writer = await asyncio.open_connection(sock=ours)
    reader, writer = await asyncio.open_connection(sock=theirs, limit=1 << 24)
    close = server_writer.close
    task = asyncio.ensure_future(
        serve_stream(daemon, "unix", server_reader, Writer(server_writer.write, close), close)
    )
    try:
        yield reader, writer
    finally:
        writer.close()
        await asyncio.wait_for(task, 10)
        daemon.views.close()
        daemon.db.close()


async def test_a_moved_poll_checks_each_config_file_once(
    daemon: Daemon,
    served: tuple[asyncio.StreamReader, asyncio.StreamWriter],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reader, writer = served
    workspace = daemon.home / "ws"
    workspace.mkdir()
    _project_config(workspace, 1000)
    sid = daemon.store.create(str(workspace)).session_id
    daemon.store.append(sid, Message(role="user", content="hello"))
    writer.write(_frame(1, "bonsai/ctx/get", {"sessionId": sid}))
    first = await _answer(reader, 1)
    process = daemon.views.process
    assert process is not None and await process.wait_ready()
    checked: list[Path] = []
    identity: Callable[[Path], Any] = state._file_identity

    def counted(path: Path) -> Any:
        checked.append(path)
        return identity(path)

    monkeypatch.setattr(state, "_file_identity", counted)
    daemon.store.append(sid, Message(role="assistant", content="hi there"))  # moved
    writer.write(_frame(2, "bonsai/ctx/get", {"sessionId": sid}))
    moved = await _answer(reader, 2)
    assert len(moved["result"]["nodes"]) > len(first["result"]["nodes"]), "computed anew"
    assert sorted(map(str, checked)) == sorted(
        {str(daemon.home / "config.json"), str(workspace / ".bonsai" / "config.json")}
    ), f"each config file stat'ed once by the poll, not {len(checked)} times"
