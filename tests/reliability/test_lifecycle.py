"""The daemon's lifecycle has no loose ends (issue 18, findings 3 and 4).

``serve --stdio`` ends at its client's end of stream (EOF on stdin, a file
or /dev/null as stdin, or an LSP ``exit``) and releases the lock, so the next
daemon starts. A tool process dies with the daemon: after a ``kill -9``
during an approved ``bash``, the command never finishes behind the user's
back, and the recovered result says its outcome is unknown and names it.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import time
from pathlib import Path

from bonsai.services.store.turns import NOT_RUN
from bonsai.sim import Script
from bonsai.sim.runner import SimulatorThread
from bonsai.sim.script import Reply, ToolCallSpec
from bonsai_testing import BONSAI, bonsai_env
from reliability.homes import client, kill, serve, start_daemon, stop
from reliability.raw_client import request


def test_serve_stdio_exits_at_eof_of_dev_null_and_releases_the_lock(tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = serve(home, "--stdio", timeout=60)  # stdin is /dev/null
    assert done.returncode == 0, done.stderr
    second = start_daemon(home)  # the lock was released
    stop(second, home)


def test_serve_stdio_exits_when_its_pipe_closes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    proc = subprocess.Popen(
        [*BONSAI, "serve", "--stdio"],
        env=bonsai_env(home),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None
    proc.stdin.write(request(1, "initialize", {"processId": None, "capabilities": {}}))
    proc.stdin.flush()
    assert proc.stdout is not None
    proc.stdout.readline()  # the daemon answered: it is serving
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0
    again = serve(home, "--stdio")
    assert again.returncode == 0, again.stderr


def test_serve_stdio_exits_on_lsp_exit_with_stdin_still_open(tmp_path: Path) -> None:
    home = tmp_path / "home"
    proc = subprocess.Popen(
        [*BONSAI, "serve", "--stdio"],
        env=bonsai_env(home),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(request(1, "initialize", {"processId": None, "capabilities": {}}))
    proc.stdin.write(request(2, "shutdown"))
    proc.stdin.write(b'Content-Length: 33\r\n\r\n{"jsonrpc":"2.0","method":"exit"}')
    proc.stdin.flush()
    try:
        assert proc.wait(timeout=30) == 0
    finally:
        proc.stdin.close()
        if proc.poll() is None:
            proc.kill()


def _bash_script(command: str) -> Script:
    call = ToolCallSpec(name="bash", arguments={"command": command}, id="slow-bash")
    return Script(steps=[Reply(text="Running it.", tool_calls=[call]), Reply(text="Done.")])


def _stored_result(db: Path, call_id: str) -> str:
    conn = sqlite3.connect(db)
    try:
        for content, body in conn.execute("SELECT content, body FROM messages WHERE role='tool'"):
            if json.loads(body or "{}").get("tool_call_id") == call_id:
                return str(content)
    finally:
        conn.close()
    raise AssertionError(f"no result for {call_id}")


def test_an_approved_bash_dies_with_the_daemon_and_its_outcome_is_unknown(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    home.mkdir()
    (home / "config.json").write_text(json.dumps({"tools": {"policy": {"bash": "allow"}}}))
    command = "echo started > started; sleep 3; echo ran > marker"
    with SimulatorThread(_bash_script(command)) as sim:
        env = {"BONSAI_PROVIDER": "sim", "BONSAI_BASE_URL": sim.openai_base_url}
        proc = start_daemon(home, **env)
        c = client(home)
        sid = c.request("bonsai/session/create", {"workspace": str(ws)})["sessionId"]
        c.request("bonsai/chat/send", {"sessionId": sid, "text": "run it"})
        deadline = time.monotonic() + 60
        while not (ws / "started").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert (ws / "started").exists(), "the command started"
        kill(proc)
        time.sleep(5)  # longer than the command would have taken
        assert not (ws / "marker").exists(), "the command died with the daemon"
        proc = start_daemon(home, **env)
        stop(proc, home)
    result = _stored_result(home / "bonsai.db", "slow-bash")
    assert "outcome unknown: the daemon stopped while it ran" in result
    assert command in result
    assert NOT_RUN not in result
