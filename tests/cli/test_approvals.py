"""Finding 2 (issue 20, and finding 5 of issue 25): approvals only for approvals.

The daemon's ``window/workDoneProgress/create`` (the repository map being
built) is acknowledged and shown as a progress line; only
``bonsai/approval/request`` asks, with the tool, its arguments and the diff.
The interactive prompt is driven through a pseudo-terminal.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import run

from bonsai.sim.runner import SimulatorThread
from bonsai.sim.script import Reply, Script, ToolCallSpec
from bonsai_testing import pty_chat

EDIT = ToolCallSpec(
    name="edit_file",
    arguments={"path": "app.py", "old_string": "x = 1", "new_string": "x = 2"},
)


@pytest.fixture
def sim() -> Iterator[SimulatorThread]:
    steps = [Reply(text="Editing.", tool_calls=[EDIT]), Reply(text="Done.")]
    script = Script(steps=steps * 2)
    with SimulatorThread(script) as running:
        yield running


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text("x = 1\n")
    return ws


def test_the_interactive_prompt_asks_only_for_the_edit(
    home: Path, workspace: Path, sim: SimulatorThread
) -> None:
    env = {"BONSAI_PROVIDER": "sim", "BONSAI_BASE_URL": sim.openai_base_url}
    text = pty_chat(home, workspace, env, "change x to 2", "y\n")
    assert text.count("[y/N]") == 1, text
    assert "approve edit_file? [y/N]" in text
    assert "None" not in text, text
    assert "file: app.py" in text and "-x = 1" in text and "+x = 2" in text, text
    assert "bonsai: mapping ws" in text, "the map's progress is a progress line"
    assert (workspace / "app.py").read_text() == "x = 2\n"
    assert "Done." in text


def test_a_refusal_leaves_the_file_alone(home: Path, workspace: Path, sim: SimulatorThread) -> None:
    env = {"BONSAI_PROVIDER": "sim", "BONSAI_BASE_URL": sim.openai_base_url}
    text = pty_chat(home, workspace, env, "change x to 2", "n\n")
    assert "approve edit_file? [y/N]" in text
    assert (workspace / "app.py").read_text() == "x = 1\n"


def test_without_a_terminal_the_edit_is_denied_and_says_how_to_approve(
    home: Path, workspace: Path, sim: SimulatorThread
) -> None:
    env = {"BONSAI_PROVIDER": "sim", "BONSAI_BASE_URL": sim.openai_base_url}
    result = run(home, "chat", "change x to 2", "--workspace", str(workspace), **env)
    assert "approval for edit_file → denied (no terminal to ask on; pass --yes" in result.stdout
    assert "None" not in result.stdout + result.stderr
    assert (workspace / "app.py").read_text() == "x = 1\n"

    approved = run(home, "chat", "again", "--workspace", str(workspace), "--yes", **env)
    assert approved.returncode == 0, approved.stderr
    assert "approval for edit_file → approved" in approved.stdout
    assert "None" not in approved.stdout
    assert (workspace / "app.py").read_text() == "x = 2\n"
