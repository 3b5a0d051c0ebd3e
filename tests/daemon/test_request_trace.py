"""A traced ``bonsai/ctx/get`` (``BONSAI_CTX_TRACE=1``) says where its time went: the
daemon's stamps, and its view process's, in the order they were made, beside an
unchanged result; off, the envelope is the usual one.

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
from bonsai.session import views


@dataclass
class Wire:
    daemon: Daemon
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    served: list[tuple[asyncio.Future[None], asyncio.StreamWriter]]
    ids: int = 0

    async def another(self) -> Wire:
        """A second connection to the same daemon (made with the environment as it is now)."""
        return Wire(self.daemon, *await _connect(self.daemon, self.served), served=self.served)

    async def ask(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The whole response envelope, as read from the socket."""
        self.ids += 1
        payload = {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params}
        body = json.dumps(payload).encode()
        self.writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        while True:
            head = await self.reader.readuntil(b"\r\n\r\n")
            length = int(head.split(b":")[1].split(b"\r\n")[0])
            message = json.loads(await self.reader.readexactly(length))
            if message.get("id") == self.ids:
                return message  # type: ignore[no-any-return]


@pytest.fixture
async def wire(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Wire]:
    monkeypatch.setenv("BONSAI_PROVIDER", "sim")
    monkeypatch.setenv("BONSAI_MODEL", "gpt-4o-mini")
    monkeypatch.setenv("BONSAI_VIEW_PROCESS", "1")
    # no view computed ahead of a poll (tests/session/test_eager_views.py): these stamp the
    # path a poll takes itself, which a write's refresh 25 ms later could otherwise take first
    monkeypatch.setattr(views, "WATCH_S", 0.0)
    db_path = tmp_path / "bonsai.db"
    daemon = Daemon(tmp_path, open_database(db_path), db_path)
    served: list[
        tuple[asyncio.Future[None], asyncio.StreamWriter]
    ] = []  # the connections served, each one's task
    try:
        yield Wire(daemon, *await _connect(daemon, served), served=served)
    finally:
        for task, writer in served:  # each ends once its client's end is closed
            writer.close()
            await asyncio.wait_for(task, 10)
        daemon.views.close()
        daemon.db.close()


def _names(envelope: dict[str, Any]) -> list[str]:
    return [name for name, _ in envelope["trace"]]


async def test_a_traced_poll_is_stamped_end_to_end_in_order_with_its_result_unchanged(
    wire: Wire, monkeypatch: pytest.MonkeyPatch
) -> None:
    daemon = wire.daemon
    sid = daemon.store.create(str(daemon.home)).session_id
    daemon.store.append(sid, Message(role="user", content="hello"))
    get = {"sessionId": sid, "view": "ledger"}
    plain = await wire.ask("bonsai/ctx/get", get)  # before tracing: the usual envelope
    assert "trace" not in plain and plain["result"]["nodes"]

    monkeypatch.setenv("BONSAI_CTX_TRACE", "1")
    traced = await wire.another()  # a connection made while tracing is on
    process = daemon.views.process
    assert process is not None and await process.wait_ready(), "the view process answers"
    daemon.store.append(sid, Message(role="assistant", content="hi"))  # the session moved
    moved = await traced.ask("bonsai/ctx/get", get)
    names = _names(moved)
    assert names[:4] == ["read", "handler", "facts", "baseline"], names
    assert names[4] == "new:version", "computed because the session moved"
    # the child's stamps sit between the daemon's ask and the answer read back
    child = ["asked", "child_read", "child_start", "child_end", "child_answer_read"]
    assert [n for n in names if n in child] == child, names
    assert names.index("asked") < names.index("child_read") < names.index("process_back")
    assert names[-1] == "framed"
    stamps = [at for _, at in moved["trace"]]
    assert stamps == sorted(stamps), f"stamped as it went (one clock): {moved['trace']}"

    kept = await traced.ask("bonsai/ctx/get", get)
    assert _names(kept) == ["read", "handler", "facts", "baseline", "kept", "framed"]
    assert kept["result"] == moved["result"], "the trace is beside the result, not in it"
    assert [n["label"] for n in moved["result"]["nodes"]] != [
        n["label"] for n in plain["result"]["nodes"]
    ], "the answer shows the append"
    other = await wire.ask("bonsai/ctx/get", get)
    assert "trace" not in other, "a connection made before tracing was on is not traced"
    assert other["result"] == kept["result"]


async def test_other_methods_are_not_traced_unless_named(
    wire: Wire, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BONSAI_CTX_TRACE", "1")
    traced = await wire.another()
    status = await traced.ask("bonsai/daemon/status", {})
    assert "trace" not in status and status["result"]["pid"]


async def _connect(
    daemon: Daemon, served: list[tuple[asyncio.Future[None], asyncio.StreamWriter]]
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A client's ends of a socket pair whose other end the daemon serves."""
    ours, theirs = socket.socketpair()
    server_reader, server_writer = await asyncio.open_connection(sock=ours)
    reader, writer = await asyncio.open_connection(sock=theirs, limit=1 << 24)
    close = server_writer.close
    served.append(
        (
            asyncio.ensure_future(
                serve_stream(
                    daemon, "unix", server_reader, Writer(server_writer.write, close), close
                )
            ),
            writer,
        )
    )
    return reader, writer
