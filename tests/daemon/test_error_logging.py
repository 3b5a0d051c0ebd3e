"""The daemon log keeps ERROR and tracebacks for real handler bugs only.

Errors we answer on purpose (invalid params, an unknown session or memory
entry) are ordinary answers; a handler that raises something unexpected is a
bug and its traceback must be in the log, once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

import bonsai.daemon.handlers  # noqa: F401  (registers the handlers)
from bonsai.daemon import rpc as daemon_rpc
from bonsai.daemon.rpc import Ctx, Writer, serve_stream
from bonsai.daemon.state import Daemon
from bonsai.services.store.db import open_database
from bonsai_testing import rpc


async def test_errors_answered_on_purpose_leave_no_traceback_in_the_log(
    stdio_client: LanguageClient, home: Path, tmp_path: Path
) -> None:
    expected = [
        ("bonsai/session/attach", {"sessionId": 5}),  # wrong type
        ("bonsai/session/attach", {"sessionId": "no-such-session"}),
        ("bonsai/session/create", {"workspace": str(tmp_path), "surprise": 1}),
        ("bonsai/memory/get", {"workspace": str(tmp_path), "name": "no-such-entry"}),
        ("bonsai/repomap/get", {}),
    ]
    for method, params in expected:
        with pytest.raises(JsonRpcException) as info:
            await rpc(stdio_client, method, params)
        assert info.value.code not in (-32601, -32603), (method, info.value)
    status = await rpc(stdio_client, "bonsai/daemon/status")
    assert status["pid"] > 0, "the daemon keeps serving"
    log = (home / "logs" / "daemon.log").read_text()
    assert "Traceback" not in log, log[-3000:]
    assert " ERROR " not in log, log[-3000:]


# ------------------------------------------------------------- a real bug, in process
class Conversation:
    """A client on one end of a socket pair; the daemon's connection loop on the other."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    async def call(self, msg_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        body = json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        self.writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body.encode()))
        while True:
            head = await self.reader.readuntil(b"\r\n\r\n")
            length = int(head.split(b":")[1].split(b"\r\n")[0])
            message: dict[str, Any] = json.loads(await self.reader.readexactly(length))
            if message.get("id") == msg_id and "method" not in message:
                return message


@contextlib.asynccontextmanager
async def open_conversation(home: Path) -> AsyncIterator[Conversation]:
    """A daemon connection in this process (its handlers are registered now)."""
    db_path = home / "bonsai.db"
    conn = open_database(db_path)
    daemon = Daemon(home, conn, db_path)
    ours, theirs = socket.socketpair()
    server_reader, server_writer = await asyncio.open_unix_connection(sock=theirs)
    client_reader, client_writer = await asyncio.open_unix_connection(sock=ours)
    writer = Writer(server_writer.write, server_writer.close)
    serving = asyncio.ensure_future(
        serve_stream(daemon, "test", server_reader, writer, server_writer.close)
    )
    try:
        yield Conversation(client_reader, client_writer)
    finally:
        client_writer.close()
        await asyncio.wait_for(serving, 10)
        conn.close()


async def test_an_unexpected_handler_failure_is_logged_once_with_its_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(ctx: Ctx, params: Any) -> Any:
        raise KeyError("a bug in a handler")

    # the status handler is replaced before the connection registers its handlers
    monkeypatch.setitem(daemon_rpc.HANDLERS, "bonsai/daemon/status", broken)
    caplog.set_level(logging.INFO)
    async with open_conversation(tmp_path) as conversation:
        await check_logging(conversation, caplog)


async def check_logging(conversation: Conversation, caplog: pytest.LogCaptureFixture) -> None:
    reply = await conversation.call(1, "bonsai/daemon/status", {})
    assert reply["error"]["code"] == -32603
    assert "KeyError" in reply["error"]["message"]
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1, [r.getMessage() for r in errors]
    assert errors[0].name == "bonsai.rpc" and errors[0].exc_info is not None
    assert "a bug in a handler" in caplog.text

    caplog.clear()
    bad = await conversation.call(2, "bonsai/session/attach", {"sessionId": 5})
    assert bad["error"]["code"] == -32602
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
