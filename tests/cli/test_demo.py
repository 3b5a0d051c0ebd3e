"""Finding 4 (issue 20): the demo shows every stage of context management, on screen.

One run of the real ``bonsai demo`` (offline, simulator, private daemon), its
output checked stage by stage, then the ledger command it prints, run as is.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from bonsai.cli.demo import this_bonsai
from bonsai_testing import bonsai_env, stop_daemon

VENV_BIN = Path(sys.executable).parent


def newcomer_path() -> str:
    """A shell's PATH before the venv is activated: what a user has after ``./run demo``."""
    return os.pathsep.join(
        entry
        for entry in os.environ.get("PATH", "").split(os.pathsep)
        if entry and Path(entry).resolve() != VENV_BIN.resolve()
    )


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    tmp = tmp_path_factory.mktemp("demo")
    fake_home = tmp / "user-home"
    fake_home.mkdir()
    env = bonsai_env(tmp / "unused", TMPDIR=str(tmp), HOME=str(fake_home), PATH=newcomer_path())
    env.pop("BONSAI_HOME")
    result = subprocess.run(  # as `./run demo` runs it: the venv's script, not on PATH
        [str(VENV_BIN / "bonsai"), "demo"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout, fake_home


def _index(text: str, needle: str) -> int:
    at = text.find(needle)
    assert at >= 0, f"{needle!r} not shown"
    return at


def test_each_stage_is_shown_as_it_happens(demo: tuple[str, Path]) -> None:
    out, _ = demo
    task1, task2, task3 = (_index(out, f"> {t}") for t in ("The test suite", "Now add", "Before"))
    reuse = _index(out, "↺ read reuse")
    assert task1 < reuse < task2, "the re-read of the unchanged file is in the first task"
    assert "[reused previous read: m_" in out
    archive = _index(out, '▣ archived episode #1 "Fix mean()"')
    assert task2 < archive < task3, "the first episode is archived once the next task starts"
    assert re.search(r"✂ GC stub \([\d,]+ tokens\)", out)
    assert re.search(r"✂ GC: \d+ stubs saved [\d,]+ tokens", out)
    fold = _index(out, "⊟ fold:")
    assert "rolling summary headings: Current goal · Decisions" in out[fold:]
    recall = _index(out, "⟲ recall")
    assert task3 < recall
    assert "episode 1, score" in out[task3:recall], "the recall hit is the archived episode"
    assert "FAIL: test_mean_0" in out[task3:recall]


def test_it_ends_with_the_table_the_chart_and_the_way_back(demo: tuple[str, Path]) -> None:
    out, _ = demo
    for row in ("input tokens sent", "cache-eligible share", "cost ratio", "requests that fit"):
        assert row in out
    assert "context fill per model request" in out
    assert re.search(r"^\s+1 [█░]+ +\d+\.\d%", out, re.M)
    assert "approval for None" not in out and "calibration ×" not in out
    assert "demo finished: all three tasks done" in out
    assert "not shown this time" not in out
    report = Path(re.search(r"the replay report: +(\S+)", out).group(1))  # type: ignore[union-attr]
    assert report.read_text().startswith("<!")


def test_the_printed_ledger_command_opens_the_same_session(demo: tuple[str, Path]) -> None:
    out, _ = demo
    line = re.search(r"the session's ledger: +(.+)$", out, re.M).group(1)  # type: ignore[union-attr]
    words = shlex.split(line)
    home = Path(words[0].split("=", 1)[1])
    assert words[2:4] == ["ctx", "--session"]
    try:
        result = subprocess.run(  # pasted as is into a shell that has not activated the venv
            ["sh", "-c", line],
            env={**bonsai_env(home), "PATH": newcomer_path()},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        assert "window 8,000" in result.stdout
        assert "summarized" in result.stdout and "archived" in result.stdout
        assert "no daemon was running; started one" in result.stderr
    finally:
        stop_daemon(home)


def test_the_demo_leaves_the_users_home_alone(demo: tuple[str, Path]) -> None:
    _, fake_home = demo
    assert list(fake_home.rglob("*")) == []


def test_the_printed_command_is_plain_bonsai_once_the_venv_is_on_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    script = str(VENV_BIN / "bonsai")
    monkeypatch.setenv("PATH", os.pathsep.join([str(VENV_BIN), newcomer_path()]))
    assert this_bonsai(script) == "bonsai"
    monkeypatch.setenv("PATH", newcomer_path())
    assert this_bonsai(script) == shlex.quote(script)
    assert this_bonsai("/src/bonsai/server/bonsai/__main__.py").endswith(" -m bonsai")
