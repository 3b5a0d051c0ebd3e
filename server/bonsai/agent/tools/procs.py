"""Tool processes die with the daemon: their own group, a parent-death signal, a kill on every exit.

A tool process leads its own process group (``start_new_session``) and, on
Linux, asks the kernel for SIGKILL when the daemon dies (``PR_SET_PDEATHSIG``),
so a ``kill -9`` of the daemon stops the command where it was. Every group
still alive is killed on the daemon's way out (:func:`kill_all`), and after a
crash the next daemon kills the group it recorded (:func:`kill_orphan`; the
process start time guards against a recycled pid).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import sys
from collections.abc import Callable

from bonsai.services.privacy import restore_user_umask

PR_SET_PDEATHSIG = 1
_libc = None
if sys.platform.startswith("linux"):
    with contextlib.suppress(OSError):
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)

_live: set[int] = set()  # process-group ids of running tool processes


def child_setup(parent: int | None = None) -> None:
    """``preexec_fn``: the user's umask, and death with the daemon (Linux)."""
    restore_user_umask()
    if _libc is not None:
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if parent is not None and os.getppid() != parent:
            os._exit(137)  # the daemon died between fork and prctl


def preexec() -> Callable[[], None]:
    """A ``preexec_fn`` bound to this daemon's pid."""
    parent = os.getpid()
    return lambda: child_setup(parent)


def started(pgid: int) -> None:
    _live.add(pgid)


def finished(pgid: int) -> None:
    _live.discard(pgid)


def kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    _live.discard(pgid)


def kill_all() -> int:
    """Kill every tool process group still running (the daemon is stopping)."""
    groups = list(_live)
    for pgid in groups:
        kill_group(pgid)
    return len(groups)


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (Linux), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            raw = handle.read()
    except OSError:
        return None
    fields = raw[raw.rfind(b")") + 2 :].split()
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def kill_orphan(pgid: int, started_at: int | None) -> bool:
    """After a crash: kill the recorded group if its leader is still that same process."""
    now = start_time(pgid)
    if now is not None and started_at is not None and now != started_at:
        return False  # the pid now belongs to another process
    # with the leader gone, Linux keeps the pid reserved while its group has members,
    # so the group id still names only the leftovers of our command
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
        return True
    return False
