"""`bonsai stop` returns once the daemon has exited, so the next command gets a new one.

A daemon still stopping would take the next `bonsai connect`/`chat` and then close it
(a CI run failed on this). The wait ends when the pid has exited, a zombie included
(a daemon this process started and has not reaped), and is bounded, with a clear message.
"""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run

from bonsai.cli.client import DaemonClient
from bonsai.cli.stop import stop_command
from bonsai.daemon import lifecycle
from bonsai.daemon.framing import encode
from bonsai_testing import stop_daemon


def _pid(home: Path) -> int:
    return int(json.loads((home / "daemon.json").read_text())["pid"])


def _pid_of(status: subprocess.CompletedProcess[str]) -> int:
    return int(json.loads(status.stdout)["pid"])


NONE_RUNNING = "bonsai stop: no daemon is running"


def _exited(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def test_bonsai_stop_returns_once_the_daemon_has_exited_and_the_next_command_starts_anew(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(home, "status").returncode == 0
    pid = _pid(home)
    stopped = run(home, "stop")
    assert stopped.returncode == 0, stopped.stderr
    assert _exited(pid), "bonsai stop returned while the daemon was still running"
    assert stopped.stdout.strip() == f"bonsai daemon stopped (pid {pid})"
    again = run(home, "status", "--json")
    assert again.returncode == 0, again.stderr
    assert _pid_of(again) != pid, "a new daemon answered"
    assert stop_command(home) == stop_command(home) == 0
    said = capsys.readouterr().out.splitlines()
    assert said == [f"bonsai daemon stopped (pid {_pid_of(again)})", NONE_RUNNING]


def test_the_test_helper_waits_too_even_for_a_daemon_this_process_started(home: Path) -> None:
    client = DaemonClient.connect(home)  # this process spawns it: its zombie stays ours
    client.close()
    pid = _pid(home)
    began = time.monotonic()
    stop_daemon(home)
    assert _exited(pid), "stop_daemon returned while the daemon was still running"
    assert time.monotonic() - began < 8, "a zombie counts as exited: no wait to the bound"


class _StuckDaemon:
    """A socket that answers like a daemon but never exits (or never answers at all)."""

    def __init__(self, home: Path, answers: bool) -> None:
        self.path = lifecycle.default_socket_path(home)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(self.path))
        self.listener.listen()
        self.answers = answers
        self.held: list[socket.socket] = []
        self.process = subprocess.Popen(["sleep", "60"])  # the pid daemon.json names
        info = {"pid": self.process.pid, "socket": str(self.path)}
        (home / "daemon.json").write_text(json.dumps(info))
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.held.append(conn)
            if self.answers:
                threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        stream = conn.makefile("rb")
        while True:
            length = 0
            while (line := stream.readline().strip()) != b"":
                length = int(line.partition(b":")[2])
            if not length:
                return
            message: dict[str, Any] = json.loads(stream.read(length))
            if "id" in message:
                conn.sendall(encode({"jsonrpc": "2.0", "id": message["id"], "result": {}}))

    def close(self) -> None:
        self.listener.close()
        for conn in self.held:
            conn.close()
        self.process.kill()
        self.process.wait()


@pytest.fixture
def stuck(home: Path, request: pytest.FixtureRequest) -> Iterator[_StuckDaemon]:
    daemon = _StuckDaemon(home, answers=request.param)
    yield daemon
    daemon.close()
    (home / "daemon.json").unlink()


@pytest.mark.parametrize("stuck", [True], indirect=True)
def test_a_daemon_that_does_not_exit_in_time_is_named_with_its_log(
    home: Path, stuck: _StuckDaemon, capsys: pytest.CaptureFixture[str]
) -> None:
    began = time.monotonic()
    assert stop_command(home, timeout=0.5) == 1
    assert time.monotonic() - began < 5
    said = capsys.readouterr()
    pid = stuck.process.pid
    assert said.err.strip() == (
        f"bonsai stop: the daemon (pid {pid}) was asked to stop but is still running after "
        f"0.5 s; its log is {home / 'logs' / 'daemon.log'}; `kill {pid}` ends it"
    )
    assert stuck.process.poll() is None, "nothing was killed for the user"


@pytest.mark.parametrize("stuck", [False], indirect=True)
def test_a_daemon_that_does_not_answer_is_named_and_not_waited_on_forever(
    home: Path, stuck: _StuckDaemon, capsys: pytest.CaptureFixture[str]
) -> None:
    began = time.monotonic()
    assert stop_command(home, timeout=0.5) == 1
    assert time.monotonic() - began < 5
    pid = stuck.process.pid
    assert capsys.readouterr().err.strip() == (
        f"bonsai stop: the daemon (pid {pid}) did not answer within 0.5 s; its log is "
        f"{home / 'logs' / 'daemon.log'}; `kill {pid}` ends it"
    )
