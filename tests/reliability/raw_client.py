"""Raw-socket access to a real daemon: arbitrary bytes out, framed replies in.

Shared by the malformed-input, fuzz and security tests and by ``bench/fuzz.py``.
``Raw`` speaks to the unix socket without any client library, so a test can
send bytes no well-behaved client would; ``DaemonProcess`` runs one
``bonsai serve --socket`` in a private ``BONSAI_HOME`` and stops it.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BONSAI = [sys.executable, "-m", "bonsai"]
Message = dict[str, Any]


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def message(payload: Any) -> bytes:
    return frame(json.dumps(payload).encode())


def request(msg_id: int | str, method: str, params: Any = None) -> bytes:
    payload: Message = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        payload["params"] = params
    return message(payload)


def is_response(msg: Message) -> bool:
    return "method" not in msg and ("result" in msg or "error" in msg)


class Raw:
    """A raw socket client: sends arbitrary bytes, reads framed replies."""

    def __init__(self, path: str, timeout: float = 20.0) -> None:
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buf = b""

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def read(self) -> Message:
        """The next framed message (a reply, a notification or a server request)."""
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        head, _, rest = self.buf.partition(b"\r\n\r\n")
        headers = dict(line.split(b":", 1) for line in head.split(b"\r\n"))
        length = int(headers[b"Content-Length"])
        while len(rest) < length:
            self._fill()
            head, _, rest = self.buf.partition(b"\r\n\r\n")
        self.buf = rest[length:]
        data: Message = json.loads(rest[:length])
        return data

    def _fill(self) -> None:
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise ConnectionError("closed")
        self.buf += chunk

    def responses_until(self, sentinel_id: int | str) -> list[Message]:
        """Every response up to and including the one answering ``sentinel_id``.

        Notifications are skipped; server→client requests are answered with a
        refusal so that nothing waits on this client."""
        seen: list[Message] = []
        while True:
            msg = self.read()
            if "method" in msg:
                if "id" in msg:
                    self.send(message({"jsonrpc": "2.0", "id": msg["id"], "result": {}}))
                continue
            seen.append(msg)
            if msg.get("id") == sentinel_id:
                return seen

    def call(self, msg_id: int | str, method: str, params: Any = None) -> Message:
        """Send one request; return its response (others are skipped)."""
        self.send(request(msg_id, method, params))
        return self.responses_until(msg_id)[-1]

    def status(self, msg_id: int | str = 999) -> Message:
        reply = self.call(msg_id, "bonsai/daemon/status")
        assert "result" in reply, reply
        result: Message = reply["result"]
        return result

    def drain_to_eof(self) -> list[Message]:
        """Read until the daemon closes the connection; return what it sent."""
        seen: list[Message] = []
        while True:
            try:
                seen.append(self.read())
            except ConnectionError:
                return seen

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()

    def __enter__(self) -> Raw:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class DaemonProcess:
    """``bonsai serve --socket`` in its own home, started and stopped by a test."""

    def __init__(
        self, home: Path, env: dict[str, str], cwd: Path, socket_path: Path | None = None
    ) -> None:
        self.home = home
        command = [*BONSAI, "serve", "--socket", str(socket_path) if socket_path else "auto"]
        (home / "logs").mkdir(parents=True, exist_ok=True)
        self.stderr_path = home / "logs" / "serve.stderr"
        with open(self.stderr_path, "ab") as err:
            self.proc = subprocess.Popen(
                command, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=err, stderr=err
            )
        self.socket = self._wait_ready()

    def _wait_ready(self, timeout: float = 60.0) -> str:  # as homes.start_daemon: loaded CI
        info_path = self.home / "daemon.json"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = self.stderr_path.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"daemon exited at start ({self.proc.returncode}): {err}")
            with contextlib.suppress(OSError, ValueError):
                info = json.loads(info_path.read_text())
                if info.get("pid") == self.proc.pid:
                    return str(info["socket"])
            time.sleep(0.02)
        self.proc.kill()
        raise RuntimeError("daemon did not start in time")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def rss_mb(self) -> float:
        """Resident set size now, from /proc (Linux)."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError("no VmRSS line")

    def peak_rss_mb(self) -> float:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError("no VmHWM line")

    def log_text(self) -> str:
        path = self.home / "logs" / "daemon.log"
        return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""

    def stop(self, timeout: float = 30.0) -> int:
        if self.alive():
            with contextlib.suppress(OSError, ConnectionError), Raw(self.socket, 5) as raw:
                raw.call(1, "bonsai/daemon/stop")
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.kill(self.pid, signal.SIGKILL)
            return self.proc.wait(timeout)
