"""The optional TCP listener: loopback only, and only with the token from daemon.json."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from pathlib import Path

from bonsai_testing import BONSAI, bonsai_env


def _send(sock: socket.socket, payload: dict) -> dict:
    body = json.dumps(payload).encode()
    sock.sendall(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, rest = data.partition(b"\r\n\r\n")
    headers = dict(line.split(b":", 1) for line in head.split(b"\r\n"))
    length = int(headers[b"Content-Length"])
    while len(rest) < length:
        rest += sock.recv(65536)
    return json.loads(rest[:length])


def test_tcp_requires_the_token(home: Path) -> None:
    proc = subprocess.Popen(
        [*BONSAI, "serve", "--socket", "auto", "--tcp", "127.0.0.1:0"],
        env=bonsai_env(home),
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while not (home / "daemon.json").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        info = json.loads((home / "daemon.json").read_text())
        port, token = info["tcp"]["port"], info["token"]
        status = {"jsonrpc": "2.0", "id": 2, "method": "bonsai/daemon/status"}

        with socket.create_connection(("127.0.0.1", port)) as sock:
            reply = _send(sock, status)
            assert reply["error"]["code"] == -32001, "no token, no service"
            init = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"capabilities": {}, "initializationOptions": {"token": "wrong"}},
            }
            assert _send(sock, init)["error"]["code"] == -32001

        with socket.create_connection(("127.0.0.1", port)) as sock:
            init = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"capabilities": {}, "initializationOptions": {"token": token}},
            }
            assert "result" in _send(sock, init)
            assert _send(sock, status)["result"]["pid"] == proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=30)
