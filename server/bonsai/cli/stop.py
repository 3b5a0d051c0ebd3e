"""``bonsai stop``: ask the user's daemon to stop, and return once its process has exited.

Returning earlier let the next ``bonsai connect``/``chat`` reach the daemon still stopping,
which then closed it; and a new daemon cannot open the store before the old one let it go.
The wait is on the pid (a zombie counts as exited: a daemon this process started stays one
until reaped), bounded, and a daemon that does not answer or does not exit is named with its
log. Nothing is killed for the user.
"""

from __future__ import annotations

import sys
from pathlib import Path

from bonsai.cli.client import INITIALIZE, DaemonClient, RpcError
from bonsai.daemon import lifecycle

STOP_WAIT_S = 10.0


class StillRunning(Exception):
    """The daemon did not answer, or did not exit, in time; the message says which."""


def stop_and_wait(home: Path, timeout: float = STOP_WAIT_S) -> int | None:
    """Stop the daemon of ``home`` and wait for its exit: its pid, or None when none ran."""
    info = lifecycle.read_daemon_json(home) or {}
    sock = lifecycle.running_socket(home)
    if sock is None:
        return None
    pid = int(info.get("pid", 0))
    sock.settimeout(timeout)
    client = DaemonClient(sock)
    try:
        client.request("initialize", INITIALIZE)
        client.request("bonsai/daemon/stop")
    except TimeoutError:
        raise StillRunning(_still(home, pid, f"did not answer within {timeout:g} s")) from None
    except (OSError, ConnectionError, RpcError):
        pass  # it went away while answering: it is stopping
    finally:
        client.file.close()
        sock.close()
    if not lifecycle.wait_exited(pid, timeout):
        why = f"was asked to stop but is still running after {timeout:g} s"
        raise StillRunning(_still(home, pid, why))
    return pid


def _still(home: Path, pid: int, why: str) -> str:
    log = home / "logs" / "daemon.log"
    return f"the daemon (pid {pid}) {why}; its log is {log}; `kill {pid}` ends it"


def stop_command(home: Path, timeout: float = STOP_WAIT_S) -> int:
    try:
        pid = stop_and_wait(home, timeout)
    except StillRunning as still:
        print(f"bonsai stop: {still}", file=sys.stderr)
        return 1
    print(
        "bonsai stop: no daemon is running" if pid is None else f"bonsai daemon stopped (pid {pid})"
    )
    return 0
