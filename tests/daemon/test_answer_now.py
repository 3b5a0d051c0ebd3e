"""``bonsai/ctx/get`` answered from the connection's read callback (``rpc.ANSWER_NOW``,
``handlers/ctx.py:get_now``), without a handler's task: what a client sees is what the
task gave. A poll sent behind a ledger action on the same connection shows the action;
a poll whose view is still computing when its client ends its input is answered before
the connection closes; a cancelled one is answered as cancelled, once.

The daemon's wire is served in process over a socket pair (the real framing, dispatch
and handlers), its views by a real view process."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import bonsai.daemon.handlers  # noqa: F401  (registers the handlers)
from bonsai.daemon.rpc import Writer, serve_stream
from bonsai.daemon.state import Daemon
from bonsai.domain import Message
from bonsai.services.store.db import open_database


def _frame(msg_id: int, method: str, params: dict[str, Any]) -> bytes:
    payload = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
    body = json.dumps(payload).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


@dataclass
class Wire:
    daemon: Daemon
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    served: asyncio.Future[None]

    async def read(self) -> dict[str, Any] | None:
        """The next message, None at the end of the stream."""
        try:
            head = await self.reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return None
        length = int(head.split(b":")[1].split(b"\r\n")[0])
        return json.loads(await self.reader.readexactly(length))  # type: ignore[no-any-return]

    async def answers(self, ids: set[int]) -> dict[int, dict[str, Any]]:
        """The responses to ``ids`` (notifications skipped); fewer if the stream ends."""
        got: dict[int, dict[str, Any]] = {}
        while set(got) != ids:
            message = await asyncio.wait_for(self.read(), 30)
            if message is None:
                return got
            if message.get("id") in ids and "method" not in message:
                got[message["id"]] = message
        return got


@pytest.fixture
async def wire(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Wire]:
    monkeypatch.setenv("BONSAI_PROVIDER", "sim")
    monkeypatch.setenv("BONSAI_MODEL", "gpt-4o-mini")
    monkeypatch.setenv("BONSAI_VIEW_PROCESS", "1")
    db_path = tmp_path / "bonsai.db"
    daemon = Daemon(tmp_path, open_database(db_path), db_path)
    ours, theirs = socket.socketpair()
    server_reader, server_writer = await asyncio.open_connection(sock=ours)
    reader, writer = await asyncio.open_connection(sock=theirs, limit=1 << 24)
    close = server_writer.close
    served = asyncio.ensure_future(
        serve_stream(daemon, "unix", server_reader, Writer(server_writer.write, close), close)
    )
    try:
        yield Wire(daemon, reader, writer, served)
    finally:
        writer.close()
        await asyncio.wait_for(served, 10)
        daemon.views.close()
        daemon.db.close()


async def _session_polled(wire: Wire) -> tuple[str, dict[str, Any]]:
    """A session with two messages whose ledger was asked once (its baseline taken, the
    view process started, the answer kept)."""
    daemon = wire.daemon
    sid = daemon.store.create(str(daemon.home)).session_id
    daemon.store.append(sid, Message(role="user", content="hello"))
    daemon.store.append(sid, Message(role="assistant", content="hi there"))
    wire.writer.write(_frame(1, "bonsai/ctx/get", {"sessionId": sid}))
    first = (await wire.answers({1}))[1]
    process = daemon.views.process
    assert process is not None and await process.wait_ready(), "the view process answers"
    return sid, first["result"]


async def test_a_poll_sent_behind_a_ledger_action_shows_the_action(wire: Wire) -> None:
    sid, ledger = await _session_polled(wire)
    node = next(n for n in ledger["nodes"] if n["section"] == "messages")
    assert node["state"] != "pinned"
    wire.writer.write(_frame(2, "bonsai/ctx/get", {"sessionId": sid}))
    kept = (await wire.answers({2}))[2]["result"]
    assert kept == ledger, "asked again with nothing moved: the same answer"
    # the action and the poll in one write: read, and dispatched, in one callback
    wire.writer.write(
        _frame(3, "bonsai/ctx/pin", {"sessionId": sid, "nodeId": node["id"]})
        + _frame(4, "bonsai/ctx/get", {"sessionId": sid})
    )
    got = await wire.answers({3, 4})
    assert got[3]["result"]["node"]["state"] == "pinned"
    after = {n["id"]: n["state"] for n in got[4]["result"]["nodes"]}
    assert after[node["id"]] == "pinned", "the poll was answered before the pin it followed"


async def test_a_poll_computing_when_its_client_ends_is_answered_before_the_close(
    wire: Wire,
) -> None:
    sid, _ = await _session_polled(wire)
    wire.daemon.store.append(sid, Message(role="user", content="and now?"))  # moved
    wire.writer.write(_frame(2, "bonsai/ctx/get", {"sessionId": sid, "view": "wire"}))
    wire.writer.write_eof()  # the client's last request: the rest is reading
    got = await wire.answers({2})
    assert 2 in got, "the connection closed before the answer being computed was sent"
    assert got[2]["result"]["view"] == "wire"
    assert await asyncio.wait_for(wire.read(), 10) is None, "then the connection ends"


async def test_a_cancelled_poll_is_answered_as_cancelled_once(wire: Wire) -> None:
    sid, _ = await _session_polled(wire)
    wire.daemon.store.append(sid, Message(role="user", content="and now?"))  # moved
    cancel = {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 2}}
    body = json.dumps(cancel).encode()
    wire.writer.write(
        _frame(2, "bonsai/ctx/get", {"sessionId": sid, "view": "wire"})
        + b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
        + _frame(3, "bonsai/daemon/status", {})
    )
    got = await wire.answers({2, 3})
    assert got[2]["error"]["code"] == -32800, got[2]
    wire.writer.write(_frame(4, "bonsai/daemon/status", {}))
    seen = []
    while (message := await asyncio.wait_for(wire.read(), 30)) is not None:
        seen.append(message.get("id"))
        if message.get("id") == 4:
            break
    assert 2 not in seen, "the cancelled poll was answered a second time"
