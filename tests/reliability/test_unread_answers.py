"""A client that sends requests and never reads the answers stops being read.

Each connection's reader (``daemon/reader.py``) stops dispatching and reading once the
connection's unsent answers pass ``WRITE_HIGH_WATER``: such a client cannot make the
daemon hold its answers without end (the stream reader this replaced read on, and the
answers piled up in the daemon's memory). Once the client reads, every request it sent
is answered, in order, and the daemon serves everyone else all along.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

from bonsai_testing import bonsai_env
from reliability.raw_client import DaemonProcess, Raw, request

# far more answers than WRITE_HIGH_WATER (4 MB) if every request were read at once
SENT_AT_MOST = 12 * 1024 * 1024
STUCK_S = 3.0  # a send blocked this long: the daemon has stopped reading this client


def _send_until_stuck(sock: socket.socket, batch: bytes, limit: int) -> int:
    """Send ``batch`` over and over until a send blocks ``STUCK_S`` or ``limit`` bytes
    went out; the requests sent whole."""
    sock.settimeout(STUCK_S)
    sent = 0
    view = memoryview(batch)
    while sent < limit:
        done = 0
        try:
            while done < len(batch):
                done += sock.send(view[done:])
        except TimeoutError:
            assert done == 0, "a send blocked inside a batch: test with a smaller one"
            return sent
        sent += len(batch)
    return sent


def test_a_client_that_does_not_read_is_not_read_and_loses_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    daemon = DaemonProcess(home, bonsai_env(home), cwd=home)
    try:
        flood = Raw(daemon.socket)
        one = request(0, "bonsai/daemon/status")
        batch = one * 64
        sent = _send_until_stuck(flood.sock, batch, SENT_AT_MOST)
        assert sent < SENT_AT_MOST, "the daemon read every request of a client that reads nothing"
        with Raw(daemon.socket) as other:  # everyone else is served meanwhile
            assert other.status()["version"]
        flood.sock.settimeout(30)
        answered = 0
        deadline = time.monotonic() + 120
        while answered < sent // len(one) and time.monotonic() < deadline:
            reply = flood.read()
            assert reply.get("id") == 0 and "result" in reply, reply
            answered += 1
        assert answered == sent // len(one), "requests sent before the pause were lost"
        reply = flood.call(7, "bonsai/daemon/status")
        assert reply["result"]["version"], "the connection was not read again"
        flood.close()
    finally:
        daemon.stop()
