"""A repository holding a ``bonsai/`` package of its own: bonsai's own Python children
(the detached daemon, the view process, the repository map's parse workers) start in
the directory they were started from, often the repository. ``python -m`` and
``python -c`` put that directory first on ``sys.path``, so without ``-P`` the
repository's ``bonsai/__init__.py`` ran in place of bonsai, with no approval, the
moment a user ran ``bonsai chat`` or opened the folder in an editor.

Each test starts the real child from inside such a repository and checks that it
works and that the planted code never ran."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from bonsai.daemon import lifecycle
from bonsai.daemon.state import Daemon
from bonsai.services.repomap.discovery import Candidate
from bonsai.services.repomap.worker import encode_request, spawn_worker
from bonsai.services.store.db import open_database
from bonsai_testing import stop_daemon

PLANTED = (
    "import pathlib\n"
    "pathlib.Path({marker!r}).write_text('the repository ran its code')\n"
    "raise SystemExit('the repository replaced bonsai')\n"
)


@pytest.fixture
def hostile_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The current directory is a repository with a ``bonsai`` package planted at its
    root; the marker file appears if any of it runs."""
    repo, marker = tmp_path / "repo", tmp_path / "planted-code-ran"
    (repo / "bonsai" / "session").mkdir(parents=True)
    for name in ("__init__.py", "__main__.py", "session/__init__.py"):
        (repo / "bonsai" / name).write_text(PLANTED.format(marker=str(marker)))
    (repo / "app.py").write_text("def handler(event):\n    return event\n")
    monkeypatch.chdir(repo)
    return repo, marker


def test_a_daemon_started_inside_the_repository_runs_bonsai_not_the_repository(
    hostile_cwd: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, marker = hostile_cwd
    home = tmp_path / "home"
    monkeypatch.setenv("BONSAI_HOME", str(home))
    try:
        sock = lifecycle.spawn_daemon(home, timeout=30)  # what `bonsai chat` does here
        sock.close()
        info = json.loads((home / "daemon.json").read_text())
        assert info["pid"] > 0
    except Exception as error:
        stderr = home / "logs" / "daemon.stderr"
        raise AssertionError(f"{error}; stderr: {stderr.read_text()[-500:]}") from error
    finally:
        stop_daemon(home)
    assert not marker.exists(), "the daemon imported the repository's bonsai package"


def test_a_parse_worker_started_inside_the_repository_parses_with_bonsai(
    hostile_cwd: tuple[Path, Path],
) -> None:
    repo, marker = hostile_cwd
    proc = spawn_worker()
    assert proc.stdin is not None and proc.stdout is not None
    try:
        app = repo / "app.py"
        chunk = [(Candidate("app.py", app.stat().st_size, app.stat().st_mtime_ns), None)]
        proc.stdin.write(encode_request(str(repo), chunk))
        proc.stdin.flush()
        line = proc.stdout.readline()
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    assert not marker.exists(), "the parse worker imported the repository's bonsai package"
    [[path, outcome, row]] = json.loads(line)
    assert (path, row is not None) == ("app.py", True), outcome


async def test_the_view_process_started_inside_the_repository_runs_bonsai(
    hostile_cwd: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, marker = hostile_cwd
    monkeypatch.setenv("BONSAI_VIEW_PROCESS", "1")  # the child from the first view
    home = tmp_path / "home"
    home.mkdir()
    daemon = Daemon(home, open_database(home / "bonsai.db"), home / "bonsai.db")
    try:
        process = daemon.views._process_for(daemon)
        assert process is not None
        ready = await asyncio.wait_for(process.wait_ready(), 60)
        assert ready, process.status()
    finally:
        daemon.views.close()
        daemon.db.close()
    assert not marker.exists(), "the view process imported the repository's bonsai package"
