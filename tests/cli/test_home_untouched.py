"""The CLI and the daemon write only into BONSAI_HOME: the user's HOME is untouched.

Also the test run itself: nothing this process did so far wrote ``~/.bonsai``
(conftest gives the run a private home before any test counts a token).
"""

from __future__ import annotations

import os
from pathlib import Path

from cli_helpers import run

from bonsai.services.config import bonsai_home
from bonsai.sim.runner import SimulatorThread
from bonsai.sim.script import Reply, Script
from bonsai_testing import stop_daemon


def test_chat_status_ctx_and_stop_write_nothing_into_home(tmp_path: Path) -> None:
    fake_home, home, ws = tmp_path / "user", tmp_path / "bonsai-home", tmp_path / "ws"
    for path in (fake_home, ws):
        path.mkdir()
    (ws / "notes.md").write_text("# notes\n")
    script = Script(steps=[Reply(text="All read.")])
    try:
        with SimulatorThread(script) as sim:
            env = {"BONSAI_PROVIDER": "sim", "BONSAI_BASE_URL": sim.openai_base_url}
            for args in (
                ("status",),
                ("chat", "read the notes", "--workspace", str(ws)),
                ("ctx", "--workspace", str(ws)),
            ):
                result = run(home, *args, HOME=str(fake_home), **env)
                assert result.returncode == 0, (args, result.stderr)
    finally:
        stop_daemon(home)
    assert list(fake_home.rglob("*")) == [], "something wrote into the user's HOME"
    assert (home / "bonsai.db").is_file()


def test_this_test_run_has_its_own_bonsai_home() -> None:
    assert os.environ["BONSAI_HOME"] != str(Path.home() / ".bonsai")
    assert bonsai_home() != Path.home() / ".bonsai"
