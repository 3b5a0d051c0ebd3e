"""A daemon that ends says so in its log, however it ends: a fatal error leaves every
thread's stack, an exception nobody handled its traceback (and the daemon serves on),
a signal its name, and every exit one line with its reason (``daemon/last_words.py``).
Real ``bonsai serve`` processes, told to fail with ``BONSAI_DEBUG_CRASH``."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from bonsai_testing import BONSAI, bonsai_env, stop_daemon


def _serve(home: Path, **extra: str) -> subprocess.Popen[bytes]:
    env = bonsai_env(home, BONSAI_PROVIDER="sim", **extra)
    proc = subprocess.Popen(
        [*BONSAI, "serve", "--socket", "auto"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not (home / "daemon.json").exists():
        assert proc.poll() is None or extra, f"the daemon exited at its start: {proc.returncode}"
        if proc.poll() is not None:
            break
        assert time.monotonic() < deadline, "the daemon did not start"
        time.sleep(0.05)
    return proc


def _log(home: Path) -> str:
    return (home / "logs" / "daemon.log").read_text(encoding="utf-8", errors="replace")


def _until_logged(home: Path, text: str, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    while text not in (found := _log(home)):
        assert time.monotonic() < deadline, f"{text!r} not in the log:\n{found[-2000:]}"
        time.sleep(0.05)
    return found


def test_a_fatal_error_leaves_every_threads_stack_in_the_log(home: Path) -> None:
    proc = _serve(home, BONSAI_DEBUG_CRASH="fault")
    assert proc.wait(60) == -signal.SIGSEGV
    text = _log(home)
    assert "Fatal Python error: Segmentation fault" in text
    assert "Current thread" in text and 'File "' in text, "the stacks, with their frames"
    assert "serving (pid" in text.split("Fatal Python error")[0], "after the daemon's own lines"


def test_an_unhandled_task_error_is_logged_the_daemon_serves_on_and_its_stop_is_said(
    home: Path,
) -> None:
    proc = _serve(home, BONSAI_DEBUG_CRASH="task")
    try:
        text = _until_logged(home, "a task failed on purpose")
        assert "unhandled in the event loop" in text and "Traceback" in text
        assert proc.poll() is None, "one failed task does not end the daemon"
        stop_daemon(home)
        assert proc.wait(60) == 0
        text = _until_logged(home, "exiting (pid")
        assert f"exiting (pid {proc.pid}): the stop was asked for" in text
        assert "peak RSS" in text
    finally:
        if proc.poll() is None:
            proc.kill()


def test_a_thread_that_fails_is_logged(home: Path) -> None:
    proc = _serve(home, BONSAI_DEBUG_CRASH="thread")
    try:
        text = _until_logged(home, "a thread failed on purpose")
        assert "uncaught exception in thread bonsai-crash-test" in text
        assert proc.poll() is None
    finally:
        stop_daemon(home)
        proc.wait(60)


def test_a_hangup_is_named_and_stops_the_daemon_cleanly(home: Path) -> None:
    proc = _serve(home)
    try:
        os.kill(proc.pid, signal.SIGHUP)  # by default the process would end without a word
        assert proc.wait(60) == 0
        text = _log(home)
        assert "received SIGHUP: stopping" in text
        assert f"exiting (pid {proc.pid}): signal SIGHUP" in text
        assert not (home / "daemon.json").exists(), "stopped as for bonsai/daemon/stop"
    finally:
        if proc.poll() is None:
            proc.kill()
