"""The tag-identity check (``bench/repomap_tags_identity.py``), run as the
command it is: a saved run compares equal to itself, and a change to one
file's definitions, references or words is reported by path with exit 1."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "repomap_tags_identity.py"
SERVER = Path(__file__).resolve().parents[2] / "server"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(SERVER))
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=120
    )


def test_identical_tags_pass_and_a_changed_file_is_named(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "shapes.py").write_text(
        "LIMIT = 3\n\nclass Box:\n    def area(self):\n        return 1\n"
    )
    (repo / "use.py").write_text("from shapes import Box\n\nprint(Box().area())\n")
    (repo / "notes.txt").write_text("not source\n")
    saved = tmp_path / "before.json"
    assert _run("--repo", str(repo), "--save", str(saved)).returncode == 0

    same = _run("--repo", str(repo), "--check", str(saved))
    assert same.returncode == 0, same.stdout + same.stderr
    assert "2 of 2 source files' tags identical" in same.stdout

    # a comment's words are part of the tags: a one-word edit must show
    (repo / "use.py").write_text("from shapes import Box\n\nprint(Box().area())  # rounding\n")
    changed = _run("--repo", str(repo), "--check", str(saved))
    assert changed.returncode == 1
    assert "1 of 2 source files' tags identical" in changed.stdout
    assert "differs: use.py" in changed.stdout
    assert "shapes.py" not in changed.stdout.split("identical", 1)[1]
