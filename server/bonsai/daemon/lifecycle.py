"""Where a user's daemon lives: ``daemon.json``, the socket path, spawning.

``$BONSAI_HOME/daemon.json`` (mode 0600) records the running daemon's pid,
socket path and, when TCP is on, its loopback address and token.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from bonsai.own_python import python_command
from bonsai.services.fs.atomic import atomic_write

MAX_SOCKET_PATH = 100


def daemon_json_path(home: Path) -> Path:
    return home / "daemon.json"


def default_socket_path(home: Path) -> Path:
    path = home / "run" / "daemon.sock"
    if len(str(path)) <= MAX_SOCKET_PATH:
        return path
    digest = hashlib.sha1(str(home.resolve()).encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"bonsai-{os.getuid()}" / f"{digest}.sock"


def write_private_json(path: Path, data: dict[str, Any]) -> None:
    atomic_write(path, json.dumps(data, indent=2, sort_keys=True).encode("utf-8"), mode=0o600)


def read_daemon_json(home: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(daemon_json_path(home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def process_exited(pid: int) -> bool:
    """The process has exited: no such pid, or a zombie its parent has not reaped yet.

    A daemon this process started stays a zombie until reaped, its pid "alive" to
    ``kill(pid, 0)``; Linux's ``/proc`` says so (state Z or X). Without ``/proc``, a signal
    probe is all there is."""
    if not Path("/proc/self/stat").exists():
        return not pid_alive(pid)
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return True
    return stat.rsplit(b")", 1)[-1].split()[:1] in ([b"Z"], [b"X"])


def wait_exited(pid: int, timeout: float) -> bool:
    """True once ``pid`` has exited (see :func:`process_exited`); False after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not process_exited(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True


def try_connect(path: Path) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
    except OSError:
        sock.close()
        return None
    return sock


def running_socket(home: Path) -> socket.socket | None:
    """A connected socket to the user's daemon, or None when none runs."""
    info = read_daemon_json(home)
    if not info or not pid_alive(int(info.get("pid", 0))):
        return None
    return try_connect(Path(str(info.get("socket", ""))))


def spawn_daemon(home: Path, timeout: float = 30.0) -> socket.socket:
    """Start a detached daemon (one per home, even when raced) and connect to it."""
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    lock_fd = os.open(home / "spawn.lock", os.O_RDWR | os.O_CREAT, 0o600)
    with open(lock_fd, "a+", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        sock = running_socket(home)
        if sock is not None:
            return sock
        log_dir = home / "logs"
        log_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        err_fd = os.open(log_dir / "daemon.stderr", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with open(err_fd, "ab") as err:
            env = {**os.environ, "BONSAI_HOME": str(home)}
            process = subprocess.Popen(
                python_command("-m", "bonsai", "serve", "--socket", "auto"),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                start_new_session=True,
                env=env,
            )
        return _wait_for_daemon(home, process, timeout)


def _wait_for_daemon(home: Path, process: subprocess.Popen[bytes], timeout: float) -> socket.socket:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        sock = running_socket(home)
        if sock is not None:
            return sock
        if process.poll() is not None:
            tail = _stderr_tail(home)
            raise RuntimeError(
                f"the bonsai daemon exited at start (code {process.returncode}){tail}"
            )
        time.sleep(0.05)
    with contextlib.suppress(OSError):
        process.kill()
    raise RuntimeError(f"the bonsai daemon did not start within {timeout:.0f}s")


def _stderr_tail(home: Path) -> str:
    try:
        text = (home / "logs" / "daemon.stderr").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    lines = [line for line in text.strip().splitlines() if line.strip()][-5:]
    return (":\n" + "\n".join(lines)) if lines else ""
