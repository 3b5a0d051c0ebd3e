"""A turn's system parts kept while the disk they came from stands
(``agent/parts_cache.py:DiskKeyedParts``): read once while nothing changes, read
again after any change a request would show (a steering file written, added up the
tree or removed, a skill or subagent added, a ``.git`` appearing), and never kept
when read within ``RACY_S`` of a change. Real files in a temporary tree."""

from __future__ import annotations

import os
import time
from pathlib import Path

from bonsai.agent.parts_cache import DiskKeyedParts
from bonsai.services.project_context import stable_parts
from bonsai.settings import ContextSettings

ARGS = {"settings": ContextSettings(), "repomap_text": None, "persona": "P"}


def _age(*paths: Path) -> None:
    """Times a minute in the past (ctime still moves: the cache is made with racy 0)."""
    old = time.time() - 60
    for path in paths:
        os.utime(path, (old, old))


def _text(cache: DiskKeyedParts, workspace: Path) -> str:
    parts = cache.parts(workspace, **ARGS)  # type: ignore[arg-type]
    assert parts == stable_parts(workspace, **ARGS)  # type: ignore[arg-type]  # what a read gives
    return "\n".join(p.text for p in parts)


def test_parts_are_kept_while_nothing_changes_and_read_again_after_each_change(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    workspace = repo / "pkg"
    workspace.mkdir(parents=True)
    (workspace / "AGENTS.md").write_text("Use tabs.\n")
    cache = DiskKeyedParts(racy_s=0)
    assert "Use tabs." in _text(cache, workspace)
    assert "Use tabs." in _text(cache, workspace) and cache.gathered == 1

    (workspace / "AGENTS.md").write_text("Use TABS.\n")  # same size, new bytes
    assert "Use TABS." in _text(cache, workspace) and cache.gathered == 2

    (repo / "CLAUDE.md").write_text("From the parent.\n")  # up the tree (no .git: to the root)
    assert "From the parent." in _text(cache, workspace) and cache.gathered == 3

    (repo / ".git").mkdir()  # now a repository: its root shows
    assert f"git repository at {repo}" in _text(cache, workspace)

    skill = workspace / ".bonsai" / "skills" / "deploy"
    skill.mkdir(parents=True)
    assert "## Skills" not in _text(cache, workspace)
    (skill / "SKILL.md").write_text("---\nname: deploy\ndescription: ships it\n---\n")
    assert "deploy: ships it" in _text(cache, workspace)
    (skill / "SKILL.md").write_text("---\nname: deploy\ndescription: ships all\n---\n")
    assert "deploy: ships all" in _text(cache, workspace)

    agents = workspace / ".bonsai" / "agents"
    agents.mkdir()
    (agents / "critic.md").write_text("---\nname: critic\ndescription: reviews\n---\n")
    assert "critic: reviews" in _text(cache, workspace)

    (workspace / "AGENTS.md").unlink()
    assert "Use TABS." not in _text(cache, workspace)
    (workspace / "pyproject.toml").write_text("")
    assert "python (pyproject.toml)" in _text(cache, workspace)
    gathered = cache.gathered
    assert "python (pyproject.toml)" in _text(cache, workspace) and cache.gathered == gathered


def test_an_edit_that_restores_the_old_mtime_is_still_seen(tmp_path: Path) -> None:
    steering = tmp_path / "AGENTS.md"
    steering.write_text("one\n")
    _age(steering)
    cache = DiskKeyedParts(racy_s=0)
    assert "one" in _text(cache, tmp_path)
    stat = steering.stat()
    steering.write_text("two\n")
    os.utime(steering, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # mtime and size as before
    assert "two" in _text(cache, tmp_path)  # the change time moved


def test_parts_read_right_after_a_change_are_not_kept(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("fresh\n")
    cache = DiskKeyedParts(racy_s=3600)  # everything here changed within the hour
    _text(cache, tmp_path)
    _text(cache, tmp_path)
    assert cache.gathered == 2  # a write in the same clock tick would not have shown


def test_each_argument_that_shapes_the_parts_is_its_own_entry(tmp_path: Path) -> None:
    cache = DiskKeyedParts(racy_s=0)
    plain = cache.parts(tmp_path, **ARGS)  # type: ignore[arg-type]
    mapped = cache.parts(tmp_path, **{**ARGS, "repomap_text": "a.py"})  # type: ignore[arg-type]
    assert "a.py" in mapped[-1].text and all("a.py" not in p.text for p in plain)
    plain.append(plain[0])  # the caller's own list: nothing kept changes
    assert len(cache.parts(tmp_path, **ARGS)) == len(plain) - 1  # type: ignore[arg-type]
    assert cache.gathered == 2
