"""Finding 1 (issue 20): a running daemon honours what the user exports afterwards.

A daemon is started by ``bonsai status`` before any key or provider is
exported; the next ``bonsai chat`` sends its own environment and the daemon
uses it for that session. The simulator checks the key like a real provider.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import files_holding, run

from bonsai.sim.runner import SimulatorThread
from bonsai.sim.script import Reply, Script

KEY = "sk-test-6f1c2b9e0d"


@pytest.fixture
def keyed_sim() -> Iterator[SimulatorThread]:
    script = Script(steps=[Reply(text="hello from the keyed provider")], require_api_key=KEY)
    with SimulatorThread(script) as sim:
        yield sim


@pytest.fixture
def open_sim() -> Iterator[SimulatorThread]:
    with SimulatorThread(Script(steps=[Reply(text="hello from the simulator")])) as sim:
        yield sim


def _sessions(home: Path) -> int:
    status = json.loads(run(home, "status", "--json", "--no-start").stdout)
    return int(status["sessions"])


def test_an_exported_key_reaches_a_daemon_started_before_it(
    home: Path, tmp_path: Path, keyed_sim: SimulatorThread
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    daemon_env = {"BONSAI_PROVIDER": "openai", "BONSAI_BASE_URL": keyed_sim.openai_base_url}

    started = run(home, "status", **daemon_env)
    assert started.returncode == 0, started.stderr
    assert "no daemon was running; started one" in started.stderr
    assert "started just now" in started.stdout

    missing = run(home, "chat", "hi", "--workspace", str(ws), **daemon_env)
    assert missing.returncode == 2, missing.stderr
    assert "no API key for provider openai: export OPENAI_API_KEY" in missing.stderr
    assert "internal error" not in missing.stderr
    assert _sessions(home) == 0, "a chat that failed before its first step left a session"

    ok = run(home, "chat", "hi", "--workspace", str(ws), OPENAI_API_KEY=KEY, **daemon_env)
    assert ok.returncode == 0, ok.stderr
    assert "hello from the keyed provider" in ok.stdout
    assert "no daemon was running" not in ok.stderr, "the first daemon should still serve"

    status = run(home, "status")
    assert "already running" in status.stdout
    session_line = [line for line in status.stdout.splitlines() if "session s_" in line]
    assert session_line and "openai" in session_line[0], status.stdout
    assert "OPENAI_API_KEY" in status.stdout and "bonsai chat (pid" in status.stdout

    assert files_holding(home, KEY.encode()) == [], "the key was written to disk"


def test_bonsai_provider_takes_effect_on_the_next_chat(
    home: Path, tmp_path: Path, keyed_sim: SimulatorThread, open_sim: SimulatorThread
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    first = {"BONSAI_PROVIDER": "openai", "BONSAI_BASE_URL": keyed_sim.openai_base_url}
    assert run(home, "status", **first).returncode == 0

    switched = run(
        home,
        "chat",
        "hi",
        "--workspace",
        str(ws),
        BONSAI_PROVIDER="sim",
        BONSAI_BASE_URL=open_sim.openai_base_url,
    )
    assert switched.returncode == 0, switched.stderr
    assert "hello from the simulator" in switched.stdout
    assert len(open_sim.requests) == 1 and keyed_sim.requests == []

    status = json.loads(run(home, "status", "--json").stdout)
    choice = status["sessionProviders"][0]["choice"]
    assert choice["provider"] == "sim"
    assert choice["baseUrl"] == open_sim.openai_base_url
    assert choice["sources"]["provider"].startswith("bonsai chat (pid")
    assert status["provider"]["provider"] == "openai", "the daemon's own default is unchanged"
    assert "BONSAI_PROVIDER" in status["provider"]["sources"]["provider"]


def test_an_unknown_provider_names_the_variable_and_the_choices(home: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    result = run(home, "chat", "hi", "--workspace", str(ws), BONSAI_PROVIDER="opneai")
    assert result.returncode == 2
    assert "unknown provider 'opneai' (BONSAI_PROVIDER" in result.stderr
    assert "openai, anthropic" in result.stderr
    assert _sessions(home) == 0


def test_settings_read_at_start_say_why_they_do_not_apply(
    home: Path, tmp_path: Path, open_sim: SimulatorThread
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {"BONSAI_PROVIDER": "sim", "BONSAI_BASE_URL": open_sim.openai_base_url}
    assert run(home, "status", **env).returncode == 0
    result = run(home, "chat", "hi", "--workspace", str(ws), BONSAI_SMOL="1", **env)
    assert result.returncode == 0, result.stderr
    assert "BONSAI_SMOL is read when the daemon starts" in result.stderr
    assert "bonsai stop" in result.stderr and "context.smol" in result.stderr
