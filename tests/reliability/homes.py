"""Real daemons in private homes, killed and restarted: shared by the storage and lifecycle tests."""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from bonsai.cli.client import DaemonClient
from bonsai_testing import BONSAI, bonsai_env

_libc = ctypes.CDLL(None, use_errno=True)
PR_CAPBSET_DROP = 24
CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 1, 2


def as_plain_user() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes root obey file modes (drops CAP_DAC_*); None for a user."""
    if os.getuid() != 0:
        return None

    def drop() -> None:
        for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
            if _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")

    return drop


def serve(
    home: Path, *args: str, timeout: float = 60, **env: str
) -> subprocess.CompletedProcess[str]:
    """Run ``bonsai serve`` to completion (a refusal, or stdio at EOF)."""
    return subprocess.run(
        [*BONSAI, "serve", *args],
        env=bonsai_env(home, **env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=as_plain_user(),
        check=False,
    )


def start_daemon(home: Path, *args: str, **env: str) -> subprocess.Popen[bytes]:
    """A socket daemon, waited for until its daemon.json names it."""
    proc = subprocess.Popen(
        [*BONSAI, "serve", "--socket", "auto", *args],
        env=bonsai_env(home, **env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    info = home / "daemon.json"
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, ValueError):
            if json.loads(info.read_text()).get("pid") == proc.pid:
                return proc
        if proc.poll() is not None:
            err = proc.stderr.read().decode() if proc.stderr else ""
            raise AssertionError(f"daemon exited at start ({proc.returncode}): {err}")
        time.sleep(0.02)
    proc.kill()
    raise AssertionError("daemon did not start")


def client(home: Path) -> DaemonClient:
    os.environ["BONSAI_HOME"] = str(home)
    return DaemonClient.connect(home, start=False)


def kill(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


def stop(proc: subprocess.Popen[bytes], home: Path) -> None:
    """Ask the daemon to stop (killed after 30 s). Its socket can exist before its
    daemon.json names it: until then the stop is retried, not given up on (a lost
    stop cost the full 30 s wait)."""
    deadline = time.monotonic() + 30
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            client(home).request("bonsai/daemon/stop")
            break
        except ConnectionError:
            time.sleep(0.02)  # no daemon.json naming a live daemon yet
        except Exception:
            break  # connected, and the daemon went away while answering: it is stopping
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        kill(proc)


def acknowledged_appends(
    home: Path, workspace: Path, count: int
) -> tuple[subprocess.Popen[bytes], str]:
    """A daemon with ``count`` acknowledged user messages in one session (still running)."""
    proc = start_daemon(home)
    c = client(home)
    sid = c.request("bonsai/session/create", {"workspace": str(workspace)})["sessionId"]
    for i in range(count):
        c.request(
            "bonsai/session/append",
            {"sessionId": sid, "role": "user", "content": f"acknowledged message {i} " * 20},
        )
    c.close()
    return proc, sid


def messages_in(home: Path) -> int:
    """Messages the database shows (read-only, through the daemon's own store)."""
    import apsw

    conn = apsw.Connection(str(home / "bonsai.db"), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "messages" not in tables:
            return 0  # only the schema-less file is left
        row = conn.execute("SELECT count(*) FROM messages").fetchone()
        return int(row[0])
    finally:
        conn.close()


def one_line(stderr: str) -> str:
    """The user-facing refusal: asserted to be one line and no traceback."""
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    assert "Traceback" not in stderr, stderr
    assert len(lines) == 1, stderr
    return lines[0]
