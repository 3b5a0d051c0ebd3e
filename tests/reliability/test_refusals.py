"""Every start-up failure the environment causes is one line: the path, the cause, the fix.

Issue 18, finding 2: an unwritable BONSAI_HOME ended in a PermissionError
traceback, a read-only database in ``apsw.ReadOnlyError`` without its file
name. Root ignores file modes, so as root these run the daemon without
CAP_DAC_OVERRIDE (``homes.as_plain_user``).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from bonsai_testing import BONSAI, bonsai_env
from reliability.homes import acknowledged_appends, one_line, serve, start_daemon, stop


def test_an_unwritable_home_is_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o500)
    done = serve(home, "--stdio")
    line = one_line(done.stderr)
    assert done.returncode == 2
    assert str(home) in line and "permission denied" in line and "Fix:" in line
    assert "BONSAI_HOME" in line


def test_a_home_that_cannot_be_created_is_one_line(tmp_path: Path) -> None:
    parent = tmp_path / "locked"
    parent.mkdir(mode=0o500)
    done = serve(parent / "home", "--stdio")
    line = one_line(done.stderr)
    assert done.returncode == 2 and str(parent / "home") in line and "permission denied" in line


def test_a_read_only_database_is_named(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    proc, _ = acknowledged_appends(home, ws, 3)
    stop(proc, home)
    db = home / "bonsai.db"
    os.chmod(db, 0o400)
    done = serve(home, "--stdio")
    line = one_line(done.stderr)
    assert done.returncode == 2
    assert str(db) in line and "read-only" in line and "chmod u+w" in line
    assert "ReadOnlyError" not in done.stderr.split("(")[0]
    log = (home / "logs" / "daemon.log").read_text()
    assert "Traceback" not in done.stderr and "bonsai serve" in done.stderr
    assert log  # the log still works: the problem is the database alone


def test_a_held_lock_is_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    proc = start_daemon(home)
    try:
        done = serve(home, "--stdio")
    finally:
        stop(proc, home)
    line = one_line(done.stderr)
    assert done.returncode == 2 and f"(pid {proc.pid})" in line and "bonsai stop" in line


def test_a_foreign_file_is_one_line_and_untouched(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    foreign = b"these are my notes, not a database\n" * 100
    (home / "bonsai.db").write_bytes(foreign)
    os.chmod(home / "bonsai.db", 0o600)
    done = serve(home, "--stdio")
    line = one_line(done.stderr)
    assert done.returncode == 2 and str(home / "bonsai.db") in line and "bonsai doctor" in line
    assert (home / "bonsai.db").read_bytes() == foreign


def test_a_full_disk_while_serving_is_a_clear_error_and_loses_nothing(tmp_path: Path) -> None:
    """RLIMIT_FSIZE stands in for a full disk: SQLite's writes past it fail."""
    import resource

    from reliability.homes import client

    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    proc, sid = acknowledged_appends(home, ws, 1)
    stop(proc, home)
    limit = (home / "bonsai.db").stat().st_size + 256 * 1024

    def small_disk() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc = subprocess.Popen(
        [*BONSAI, "serve", "--socket", "auto"],
        env=bonsai_env(home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=small_disk,
    )
    try:
        import time

        deadline = time.monotonic() + 60
        while not (home / "daemon.json").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        c = client(home)
        acked, error = 1, None
        for i in range(400):
            try:
                c.request(
                    "bonsai/session/append",
                    {"sessionId": sid, "role": "user", "content": f"{i} " + "x" * 4000},
                )
                acked += 1
            except Exception as failure:  # the RpcError the client sees
                error = str(failure)
                break
        assert error is not None, "the small disk filled up"
        assert str(home / "bonsai.db") in error and "Fix:" in error, error
        assert "Traceback" not in error and "\n" not in error
        assert c.request("bonsai/daemon/status")["pid"] == proc.pid, "the daemon carries on"
    finally:
        stop(proc, home)
    proc = start_daemon(home)
    messages = client(home).request("bonsai/session/attach", {"sessionId": sid})["messages"]
    stop(proc, home)
    assert len(messages) == acked, "every acknowledged message is kept"
