"""Other local users get nothing: a private home and private files under any umask (17.6),
and socket paths no one else can tamper with (17.7).

Under umask 022 the old main made ``BONSAI_HOME`` 0755 and ``bonsai.db``, its
WAL and ``daemon.log`` 0644; ``--socket DIR/x.sock`` chmodded an existing DIR
to 0700, and ``--socket auto`` accepted a ``/tmp/bonsai-<uid>`` another user
owned. As root, ``chown`` to nobody stands in for another user.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import time
from pathlib import Path

import pytest

from bonsai.sim import Script
from bonsai.sim.runner import SimulatorThread
from bonsai.sim.script import Reply, ToolCallSpec
from bonsai_testing import BONSAI, bonsai_env
from reliability.homes import client, serve, stop

NOBODY = 65534


def _start(home: Path, umask: int, *args: str, **env: str) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [*BONSAI, "serve", "--socket", "auto", *args],
        env=bonsai_env(home, **env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: os.umask(umask) and None,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if json.loads((home / "daemon.json").read_text()).get("pid") == proc.pid:
                return proc
        except (OSError, ValueError):
            pass
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.02)
    raise AssertionError("no daemon")


def _open_to_others(home: Path) -> list[str]:
    found = []
    for root, dirs, files in os.walk(home):
        for name in [*dirs, *files, ""]:
            path = Path(root) / name
            mode = os.lstat(path).st_mode
            if not stat.S_ISLNK(mode) and mode & 0o077 and not stat.S_ISSOCK(mode):
                found.append(f"{path.relative_to(home)} {stat.S_IMODE(mode):o}")
    return found


@pytest.mark.parametrize("umask", [0o022, 0o000])
def test_everything_in_the_home_is_private_under_any_umask(tmp_path: Path, umask: int) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    home.mkdir()
    os.chmod(home, 0o777 & ~umask)
    calls = [
        ToolCallSpec(name="bash", arguments={"command": "echo made > by_bash.txt"}, id="b"),
        ToolCallSpec(name="write_file", arguments={"path": "new.txt", "content": "x"}, id="w"),
        ToolCallSpec(name="bash", arguments={"command": "seq 1 20000"}, id="spill"),
    ]
    script = Script(steps=[Reply(text="Working.", tool_calls=calls), Reply(text="Done.")])
    with SimulatorThread(script) as sim:
        env = {"BONSAI_PROVIDER": "sim", "BONSAI_BASE_URL": sim.openai_base_url}
        (home / "config.json").write_text(
            json.dumps({"tools": {"policy": {"bash": "allow", "write_file": "allow"}}})
        )
        proc = _start(home, umask, **env)
        c = client(home)
        sid = c.request("bonsai/session/create", {"workspace": str(ws)})["sessionId"]
        c.request("bonsai/session/attach", {"sessionId": sid})
        done: dict[str, str] = {}
        c.on_notification = lambda m, p: (
            done.__setitem__(p["turnId"], p["kind"])
            if m == "bonsai/chat/event" and p.get("kind") in ("done", "error")
            else None
        )
        turn = c.request("bonsai/chat/send", {"sessionId": sid, "text": "go"})["turnId"]
        while turn not in done:
            c.pump()
        assert (home / "bonsai.db-wal").exists() and (home / "bonsai.db-shm").exists()
        running = _open_to_others(home)
        stop(proc, home)
    assert running == [], "while running: the database, WAL, SHM, logs, daemon.json"
    assert _open_to_others(home) == [], "after the stop: backups too"
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    # the workspace keeps the user's own umask: bonsai's privacy is not forced on it
    expected = 0o666 & ~umask
    assert stat.S_IMODE((ws / "by_bash.txt").stat().st_mode) == expected
    assert stat.S_IMODE((ws / "new.txt").stat().st_mode) == expected


def test_a_too_open_home_is_tightened_and_said_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    os.chmod(home, 0o755)
    (home / "logs").mkdir(mode=0o755)
    (home / "logs" / "daemon.log").write_text("old\n")
    os.chmod(home / "logs" / "daemon.log", 0o644)
    first = serve(home, "--stdio")
    assert first.returncode == 0, first.stderr
    notes = [line for line in first.stderr.splitlines() if "tightened" in line]
    assert len(notes) == 1 and str(home) in notes[0] and "readable by other users" in notes[0]
    assert _open_to_others(home) == []
    log = (home / "logs" / "daemon.log").read_text()
    assert log.count("readable by other users") == 1
    second = serve(home, "--stdio")
    assert "tightened" not in second.stderr, "said once: nothing left to tighten"


# ------------------------------------------------------------------ sockets
def _socket_serve(home: Path, sock: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*BONSAI, "serve", "--socket", str(sock)],
        env=bonsai_env(home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _socket_starts(home: Path, sock: Path) -> None:
    proc = subprocess.Popen(
        [*BONSAI, "serve", "--socket", str(sock)],
        env=bonsai_env(home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while not sock.exists() and time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.02)
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600
    stop(proc, home)


@pytest.mark.skipif(os.getuid() != 0, reason="simulating another user needs chown (root)")
@pytest.mark.parametrize("mode", [0o1777, 0o755])
def test_a_socket_directory_of_another_user_is_refused_and_left_alone(
    tmp_path: Path, mode: int
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chown(shared, NOBODY, NOBODY)
    os.chmod(shared, mode)
    done = _socket_serve(tmp_path / "home", shared / "x.sock")
    assert done.returncode == 2
    assert f"belongs to uid {NOBODY}" in done.stderr and str(shared) in done.stderr
    assert stat.S_IMODE(shared.stat().st_mode) == mode, "never chmods a directory it did not make"


def test_a_directory_writable_by_others_is_refused_unless_sticky(tmp_path: Path) -> None:
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    os.chmod(open_dir, 0o777)
    done = _socket_serve(tmp_path / "home", open_dir / "x.sock")
    assert done.returncode == 2 and "writable by other users" in done.stderr
    assert stat.S_IMODE(open_dir.stat().st_mode) == 0o777
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    os.chmod(sticky, 0o1777)
    _socket_starts(tmp_path / "home", sticky / "x.sock")
    assert stat.S_IMODE(sticky.stat().st_mode) == 0o1777, "used as it is, never chmodded"


def test_an_existing_private_directory_is_used_without_a_chmod(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    os.chmod(mine, 0o755)
    _socket_starts(tmp_path / "home", mine / "x.sock")
    assert stat.S_IMODE(mine.stat().st_mode) == 0o755
    made = tmp_path / "made" / "deeper"
    _socket_starts(tmp_path / "home", made / "x.sock")
    assert stat.S_IMODE(made.stat().st_mode) == 0o700, "a directory it creates is 0700"


def _long_home(tmp_path: Path) -> Path:
    return tmp_path / ("h" * 120)  # too long for a socket path: the per-user directory is used


@pytest.mark.skipif(os.getuid() != 0, reason="simulating another user needs chown (root)")
def test_a_per_user_socket_directory_owned_by_someone_else_is_refused(tmp_path: Path) -> None:
    tmp = tmp_path / "t"
    tmp.mkdir()
    planted = tmp / f"bonsai-{os.getuid()}"
    planted.mkdir(mode=0o700)
    os.chown(planted, NOBODY, NOBODY)
    done = serve(_long_home(tmp_path), "--socket", "auto", TMPDIR=str(tmp))
    assert done.returncode == 2, done.stderr
    assert str(planted) in done.stderr and f"belongs to uid {NOBODY}" in done.stderr


def test_a_per_user_socket_directory_that_is_a_symlink_is_refused(tmp_path: Path) -> None:
    tmp = tmp_path / "t"
    tmp.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (tmp / f"bonsai-{os.getuid()}").symlink_to(elsewhere)
    done = serve(_long_home(tmp_path), "--socket", "auto", TMPDIR=str(tmp))
    assert done.returncode == 2 and "symbolic link" in done.stderr
    assert list(elsewhere.iterdir()) == [], "nothing was made through the link"


def test_a_per_user_socket_directory_too_open_is_refused(tmp_path: Path) -> None:
    tmp = tmp_path / "t"
    tmp.mkdir()
    loose = tmp / f"bonsai-{os.getuid()}"
    loose.mkdir()
    os.chmod(loose, 0o755)
    done = serve(_long_home(tmp_path), "--socket", "auto", TMPDIR=str(tmp))
    assert done.returncode == 2 and "not 0700" in done.stderr and "chmod 700" in done.stderr


def test_the_per_user_socket_directory_is_made_0700(tmp_path: Path) -> None:
    tmp = tmp_path / "t"
    tmp.mkdir()
    home = _long_home(tmp_path)
    proc = subprocess.Popen(
        [*BONSAI, "serve", "--socket", "auto"],
        env=bonsai_env(home, TMPDIR=str(tmp)),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=lambda: os.umask(0o022) and None,
    )
    deadline = time.monotonic() + 60
    while not (home / "daemon.json").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    made = tmp / f"bonsai-{os.getuid()}"
    try:
        info = os.lstat(made)
        assert stat.S_ISDIR(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o700
        assert info.st_uid == os.getuid()
    finally:
        stop(proc, home)
