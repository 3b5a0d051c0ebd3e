"""Hostile bytes on the wire: clear errors, and the daemon keeps serving.

One daemon serves the whole file, each test on connections of its own: none of
them changes its state (every message is refused; what a test asserts of a fresh
daemon, no sessions, holds because none of the others made one), and a message
that broke it would fail every test after it too.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator

import pytest

from bonsai_testing import BONSAI, bonsai_env, stop_daemon
from reliability.raw_client import Raw, frame, message


@pytest.fixture(scope="module")
def daemon_socket(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home = tmp_path_factory.mktemp("malformed") / "home"
    home.mkdir()
    try:
        subprocess.run([*BONSAI, "status"], env=bonsai_env(home), check=True, capture_output=True)
        yield json.loads((home / "daemon.json").read_text())["socket"]
    finally:
        stop_daemon(home)


CASES = [
    (frame(b"{not json"), -32700, "Parse error"),
    (frame(b"\xff\xfe{}"), -32700, "UTF-8"),
    (frame(b"[1, 2]"), -32600, "batch"),
    (frame(b'"just a string"'), -32600, "JSON object"),
    (frame(b"[" * 100_000 + b"]" * 100_000), -32700, ""),
    (message({"jsonrpc": "1.0", "id": 5, "method": "bonsai/daemon/status"}), -32600, "2.0"),
    (message({"jsonrpc": "2.0", "id": 6, "method": 7}), -32600, "method"),
    (
        message({"jsonrpc": "2.0", "id": 7, "method": "bonsai/session/create", "params": [1]}),
        -32602,
        "object",
    ),
    (
        message(
            {
                "jsonrpc": "2.0",
                "id": 8,
                "method": "bonsai/session/create",
                "params": {"workspace": None},
            }
        ),
        -32602,
        "workspace",
    ),
    (
        message(
            {
                "jsonrpc": "2.0",
                "id": 9,
                "method": "bonsai/session/append",
                "params": {"sessionId": "x" * 10_000, "role": "user", "content": "y"},
            }
        ),
        -32602,
        "sessionId",
    ),
    (
        message(
            {
                "jsonrpc": "2.0",
                "id": 10,
                "method": "bonsai/session/create",
                "params": {"workspace": "/w", "title": "t" * 2_000_000},
            }
        ),
        -32602,
        "title",
    ),
    (message({"jsonrpc": "2.0", "id": 11, "method": "nope/nope"}), -32601, "nope/nope"),
]


@pytest.mark.parametrize(("data", "code", "fragment"), CASES)
def test_bad_message_gets_an_error_and_the_connection_survives(
    daemon_socket: str, data: bytes, code: int, fragment: str
) -> None:
    raw = Raw(daemon_socket)
    raw.send(data)
    reply = raw.read()
    assert reply["error"]["code"] == code, reply
    assert fragment in reply["error"]["message"]
    assert raw.status()["version"]


def test_request_without_params_is_answered(daemon_socket: str) -> None:
    raw = Raw(daemon_socket)
    raw.send(message({"jsonrpc": "2.0", "id": 1, "method": "bonsai/session/list"}))
    assert raw.read()["result"] == {"sessions": []}


@pytest.mark.parametrize(
    "data",
    [
        b"Content-Length: nope\r\n\r\n{}",
        b"Content-Length: 99999999999\r\n\r\n",
        b"Garbage without a colon\r\n\r\n",
        b"X-Other: 1\r\n\r\n{}",
    ],
)
def test_broken_frame_closes_only_that_connection(daemon_socket: str, data: bytes) -> None:
    bystander = Raw(daemon_socket)
    assert bystander.status(1)
    bad = Raw(daemon_socket)
    bad.send(data)
    reply = bad.read()
    assert reply["error"]["code"] == -32700
    with pytest.raises((ConnectionError, OSError)):
        for _ in range(3):
            bad.status()
    assert bystander.status(2)["clients"] >= 1


def test_truncated_frame_then_disconnect(daemon_socket: str) -> None:
    bad = Raw(daemon_socket)
    bad.send(b'Content-Length: 100\r\n\r\n{"jsonrpc"')
    bad.sock.close()
    time.sleep(0.1)
    assert Raw(daemon_socket).status()["version"]
