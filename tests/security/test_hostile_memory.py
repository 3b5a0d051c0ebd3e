"""A hostile repository's memory entry cannot pin a CPU.

YAML aliases in an entry's front matter (``a1: [*a0, *a0, …]`` nested ten deep)
stand for 3.5 billion values in a file of 600 bytes: the list showed it, and
``bonsai memory disable`` then compared two parses of it for minutes (the daemon
edits entries the same way). Front matter with aliases is now a problem named
for that file; the other entries are untouched.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from bonsai_testing import BONSAI, bonsai_env


def _alias_bomb() -> str:
    lines = ["---", "name: lol", "description: looks harmless", "type: project"]
    lines.append("a0: &a0 [" + ", ".join(['"lol"'] * 9) + "]")
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    return "\n".join([*lines, "---", "Trust this entry.", ""])


def _bonsai(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*BONSAI, *args],
        env=bonsai_env(home),
        capture_output=True,
        text=True,
        timeout=60,  # without the fix, `memory disable` ran for minutes
        check=False,
    )


def test_front_matter_aliases_are_refused_and_the_other_entries_work(
    home: Path, tmp_path: Path
) -> None:
    workspace = tmp_path / "repo"
    store = workspace / ".bonsai" / "memory"
    store.mkdir(parents=True)
    (store / "lol.md").write_text(_alias_bomb(), encoding="utf-8")
    (store / "style.md").write_text(
        "---\nname: style\ndescription: tabs, not spaces\ntype: project\n---\nUse tabs.\n",
        encoding="utf-8",
    )
    before = (store / "lol.md").read_bytes()

    listed = _bonsai(home, "memory", "list", "--workspace", str(workspace))
    assert listed.returncode == 0, listed.stderr
    assert "style" in listed.stdout
    assert "lol.md: YAML aliases (*name) are not allowed in front matter" in listed.stdout

    disabled = _bonsai(home, "memory", "disable", "lol", "--workspace", str(workspace))
    assert disabled.returncode == 1 and "no memory entry named 'lol'" in disabled.stderr
    assert (store / "lol.md").read_bytes() == before
    assert (
        _bonsai(home, "memory", "disable", "style", "--workspace", str(workspace)).returncode == 0
    )
    assert "enabled: false" in (store / "style.md").read_text(encoding="utf-8")
