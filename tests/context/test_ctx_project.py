"""Project context gathered from disk and git: order, caps, encodings, stability, volatile tail."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bonsai.domain import Evidence
from bonsai.services.project_context import (
    GitBaseline,
    gather_parts,
    range_hash,
    steering_files,
    take_baseline,
)
from bonsai.settings import ContextSettings


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "pkg" / "sub").mkdir(parents=True)
    _git(root, "init", "-q")
    _git(root, "config", "user.email", "t@example.com")
    _git(root, "config", "user.name", "t")
    (root / "AGENTS.md").write_text("root agents\n")
    (root / "pkg" / "CLAUDE.md").write_text("pkg claude\n")
    (root / "pkg" / "AGENTS.md").write_text("pkg agents\n")
    (root / "pkg" / "sub" / ".cursorrules").write_text("sub rules\n")
    (root / "pyproject.toml").write_text("[project]\nname='x'\n")
    (root / "app.py").write_text("print(1)\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "init")
    return root


def _parts(workspace: Path, **kw):  # type: ignore[no-untyped-def]
    args = {
        "settings": ContextSettings(),
        "repomap_text": None,
        "baseline": None,
        "reads": [],
        "peers": [],
        "persona": "You are bonsai.",
    }
    return gather_parts(workspace, **(args | kw))


def test_steering_files_are_read_nearest_first_up_to_the_git_root(
    repo: Path, tmp_path: Path
) -> None:
    (tmp_path / "AGENTS.md").write_text("outside the repository\n")
    found = steering_files(repo / "pkg" / "sub", repo)
    names = [p.relative_to(repo).as_posix() for p in found]
    assert names == ["pkg/sub/.cursorrules", "pkg/AGENTS.md", "pkg/CLAUDE.md", "AGENTS.md"]
    ids = [p.id for p in _parts(repo / "pkg" / "sub")]
    assert ids == [
        "sys:persona",
        "sys:env",
        "sys:steering:.cursorrules",
        "sys:steering:../AGENTS.md",
        "sys:steering:../CLAUDE.md",
        "sys:steering:../../AGENTS.md",
        "sys:volatile",
    ]


def test_outside_git_the_walk_reaches_the_filesystem_root(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "CLAUDE.md").write_text("top\n")
    found = steering_files(tmp_path / "a" / "b", None)
    assert tmp_path / "CLAUDE.md" in found
    volatile = _parts(tmp_path / "a" / "b")[-1]
    assert "Git: not a git repository." in volatile.text


def test_steering_is_capped_with_a_visible_note(repo: Path) -> None:
    (repo / "AGENTS.md").write_text("é" * 5_000)  # 10,000 bytes
    part = next(
        p
        for p in _parts(repo, settings=ContextSettings(steering_cap_bytes=1_001))
        if p.id == "sys:steering:AGENTS.md"
    )
    body = part.text.splitlines()[1]
    assert body == "é" * 500  # cut at a character boundary, never inside one
    assert (
        "truncated: it has 10,000 bytes, the first 1,000 are shown (steering cap 1,001 bytes)"
        in part.text
    )
    smol = next(
        p
        for p in _parts(repo, settings=ContextSettings(smol=True, steering_cap_bytes=2_048))
        if p.id == "sys:steering:AGENTS.md"
    )
    assert "the first 2,048 are shown" in smol.text


def test_invalid_utf8_is_shown_with_a_note(repo: Path) -> None:
    (repo / "AGENTS.md").write_bytes(b"ok \xff\xfe bytes\n")
    part = next(p for p in _parts(repo) if p.id == "sys:steering:AGENTS.md")
    assert "ok \ufffd\ufffd bytes" in part.text
    assert "AGENTS.md is not valid UTF-8" in part.text


def test_the_prefix_is_byte_stable(repo: Path) -> None:
    first = _parts(repo)
    assert _parts(repo) == first
    (repo / "notes.txt").write_text("an unrelated new file\n")
    (repo / "app.py").write_text("print(2)\n")
    later = _parts(repo)
    assert [p for p in later if p.cacheable] == [p for p in first if p.cacheable]
    (repo / "AGENTS.md").write_text("new rules\n")
    changed = {p.id for p in _parts(repo) if p.cacheable} - {p.id for p in first} | {
        a.id for a, b in zip(first, _parts(repo), strict=True) if a.cacheable and a != b
    }
    assert changed == {"sys:steering:AGENTS.md"}


def test_environment_and_indexes(repo: Path) -> None:
    skills = repo / ".bonsai" / "skills"
    (skills / "release").mkdir(parents=True)
    (skills / "release" / "SKILL.md").write_text(
        "---\nname: release\ndescription: Cut a release.\n---\nsteps"
    )
    (skills / "broken").mkdir()
    (skills / "broken" / "SKILL.md").write_text("---\nname: [unclosed\n---\n")
    agents = repo / ".bonsai" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text("---\ndescription: Reviews diffs.\n---\nYou review.")
    parts = {p.id: p for p in _parts(repo, repomap_text="app.py:\n  main()")}
    env = parts["sys:env"].text
    assert f"- Workspace: {repo.resolve()}" in env and "python (pyproject.toml)" in env
    assert "- release: Cut a release. (.bonsai/skills/release/SKILL.md)" in parts["sys:skills"].text
    assert "- broken: [bonsai: front matter is not valid YAML" in parts["sys:skills"].text
    assert "- reviewer: Reviews diffs. (.bonsai/agents/reviewer.md)" in parts["sys:subagents"].text
    assert parts["sys:repomap"].text == "## Repository map\napp.py:\n  main()"
    smol = {p.id for p in _parts(repo, repomap_text="x", settings=ContextSettings(smol=True))}
    assert not smol & {"sys:skills", "sys:subagents", "sys:repomap"}


def test_the_volatile_tail_separates_this_sessions_changes(repo: Path) -> None:
    (repo / "app.py").write_text("print('work in progress')\n")  # before the session
    baseline = take_baseline(repo)
    assert GitBaseline.model_validate_json(baseline.model_dump_json()) == baseline
    (repo / "new.py").write_text("x = 1\n")  # during the session
    text = _parts(repo, baseline=baseline, peers=["vscode", "nvim"])[-1].text
    assert text.startswith("## Volatile state\nGit: branch `")
    ours, theirs = text.split("Already changed when the session started")
    assert "?? new.py" in ours and "app.py" not in ours
    assert "M app.py" in theirs
    assert "Other clients attached: nvim, vscode." in text
    (repo / "app.py").write_text("print('edited in the session')\n")
    again = _parts(repo, baseline=baseline)[-1].text
    assert "M app.py" in again.split("Already changed")[0]


def test_stale_reads_are_listed(repo: Path) -> None:
    app = repo / "app.py"
    whole = Evidence(kind="read", path="app.py", content_hash=range_hash(app, None, None))
    lines = Evidence(
        kind="read", path=str(app), start_line=1, end_line=1, content_hash=range_hash(app, 1, 1)
    )
    assert "Stale reads: none." in _parts(repo, reads=[whole, lines])[-1].text
    app.write_text("print(3)\nmore\n")
    text = _parts(repo, reads=[whole, lines])[-1].text
    assert "- app.py\n" in text and f"- {app} lines 1-1" in text
    app.unlink()
    assert "- app.py (deleted or unreadable)" in _parts(repo, reads=[whole])[-1].text
