"""``bonsai chat`` when the turn is cut short: by the user's Ctrl-C, by the daemon dying,
or by a provider that backs off. Each is said in one line, never a traceback, and a
cancelled turn does not hold the session.

The real ``bonsai`` console script against a private home, a socket daemon it starts
itself and the simulator as the provider (its first request answered only after a
minute, so the turn is certainly running when it is interrupted).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import run

from bonsai.cli.client import DaemonClient
from bonsai.cli.silence import SILENT_S
from bonsai.sim import Fault
from bonsai.sim.runner import SimulatorThread
from bonsai.sim.script import Reply, Script
from bonsai_testing import BONSAI, bonsai_env

HUNG_S = 60.0  # the first request's silence: far longer than any wait below


@pytest.fixture
def hung_sim() -> Iterator[SimulatorThread]:
    script = Script(
        steps=[Reply(text="The second answer.")],
        faults={1: Fault(kind="slow_first_byte", delay_s=HUNG_S)},
    )
    with SimulatorThread(script) as running:
        yield running


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    (path / "app.py").write_text("def main():\n    return 1\n")
    return path


def start_chat(home: Path, workspace: Path, sim: SimulatorThread) -> subprocess.Popen[str]:
    env = bonsai_env(home, BONSAI_PROVIDER="sim", BONSAI_BASE_URL=sim.openai_base_url)
    return subprocess.Popen(
        [*BONSAI, "chat", "are you there?", "--workspace", str(workspace)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_request(sim: SimulatorThread, within_s: float = 60.0) -> None:
    """Until the turn's request has reached the provider (the turn is running)."""
    deadline = time.monotonic() + within_s
    while not sim.requests:
        assert time.monotonic() < deadline, "the turn never reached the provider"
        time.sleep(0.05)


def test_ctrl_c_cancels_the_turn_in_one_line_and_frees_the_session(
    home: Path, workspace: Path, hung_sim: SimulatorThread
) -> None:
    chat = start_chat(home, workspace, hung_sim)
    wait_for_request(hung_sim)
    chat.send_signal(signal.SIGINT)
    out, err = chat.communicate(timeout=30)
    assert chat.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert "bonsai chat: cancelled" in err, err
    assert "turn cancelled" not in out, "said once, not again as the turn's error"
    assert "(session s_" in err, "the session is named, to go on with it"

    started = time.monotonic()
    again = run(
        home,
        "chat",
        "and now?",
        "--workspace",
        str(workspace),
        BONSAI_PROVIDER="sim",
        BONSAI_BASE_URL=hung_sim.openai_base_url,
    )
    assert again.returncode == 0, again.stderr
    assert "The second answer." in again.stdout
    assert time.monotonic() - started < HUNG_S / 2, "the next message waited for the hung turn"


def test_a_turn_cancelled_from_another_client_is_said_as_cancelled_not_as_an_error(
    home: Path, workspace: Path, hung_sim: SimulatorThread
) -> None:
    chat = start_chat(home, workspace, hung_sim)
    wait_for_request(hung_sim)
    other = DaemonClient.connect(home, start=False)  # an editor on the same session
    try:
        listed = other.request("bonsai/session/list", {"workspace": str(workspace)})
        sid = listed["sessions"][0]["sessionId"]
        assert other.request("bonsai/chat/cancel", {"sessionId": sid})["cancelled"]
    finally:
        other.close()
    out, err = chat.communicate(timeout=30)
    assert chat.returncode == 1, err
    assert out.splitlines()[-1] == "  · cancelled", out
    assert "!" not in out and "error" not in out, out
    assert f"(session {sid})" in err, err


def test_a_daemon_killed_mid_turn_is_one_line(
    home: Path, workspace: Path, hung_sim: SimulatorThread
) -> None:
    chat = start_chat(home, workspace, hung_sim)
    wait_for_request(hung_sim)
    pid = int(json.loads((home / "daemon.json").read_text())["pid"])
    os.kill(pid, signal.SIGKILL)
    _, err = chat.communicate(timeout=30)
    assert chat.returncode == 1, err
    assert "Traceback" not in err, err
    assert "bonsai chat: lost the daemon during the turn" in err, err
    assert str(home / "logs" / "daemon.log") in err, "the log to look in is named"


def test_a_provider_backing_off_is_shown_while_it_waits(home: Path, workspace: Path) -> None:
    script = Script(
        steps=[Reply(text="Made it.")],
        faults={1: Fault(kind="rate_limit", retry_after="1")},
    )
    with SimulatorThread(script) as sim:
        chat = run(
            home,
            "chat",
            "hello",
            "--workspace",
            str(workspace),
            BONSAI_PROVIDER="sim",
            BONSAI_BASE_URL=sim.openai_base_url,
        )
    assert chat.returncode == 0, chat.stderr
    assert "» retrying in 1 s (rate limited; attempt 2)" in chat.stdout
    assert chat.stdout.index("retrying") < chat.stdout.index("Made it.")


def test_a_silent_provider_is_said_once_while_the_chat_waits(
    home: Path, workspace: Path, hung_sim: SimulatorThread
) -> None:
    chat = start_chat(home, workspace, hung_sim)
    wait_for_request(hung_sim)
    time.sleep(SILENT_S + 5)  # the line, and the time to say it twice if it were repeated
    chat.send_signal(signal.SIGINT)
    out, err = chat.communicate(timeout=30)
    said = "no reply for 10 s yet: the provider is slow, or another turn of this session runs first"
    assert out.count(said) == 1, out + err
