"""Stores: tiers, name clashes, add/edit/forget/enable, issues left untouched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bonsai.services.memory import MemoryStoreError
from bonsai.services.memory.gitignore import gitignore_advisory


def _write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(text, encoding="utf-8")
    return path


def test_project_entry_wins_a_name_clash(make_service, home: Path, workspace: Path) -> None:
    _write(home / "memory", "style", "---\ndescription: user style\n---\nuser body\n")
    _write(workspace / ".bonsai/memory", "style", "---\ndescription: project style\n---\np\n")
    service = make_service(model=False)
    entry = service.get("style")
    assert (entry.tier, entry.description) == ("project", "project style")
    assert service.status().shadowed == ["style"]
    assert [e.name for e in service.list()] == ["style"]


def test_add_derives_name_and_description(make_service, home: Path) -> None:
    service = make_service(model=False)
    plan = service.add("Always store timestamps in UTC. Local time caused a bug in March.")
    assert plan.name == "always-store-timestamps-utc-local-time"
    assert plan.created and plan.path == home / "memory" / f"{plan.name}.md"
    entry = service.get(plan.name)
    assert entry.description == "Always store timestamps in UTC. Local time caused a bug in March."
    assert (entry.tier, entry.type, entry.created.isoformat()) == ("user", "user", "2026-07-01")


def test_add_refuses_an_existing_name(make_service) -> None:
    service = make_service(model=False)
    service.add("Prefer ruff for formatting.", name="prefers-ruff")
    with pytest.raises(MemoryStoreError, match="exists; edit it instead"):
        service.add("Something different entirely about sqlite.", name="prefers-ruff")


def test_project_tier_needs_a_workspace(home: Path) -> None:
    from bonsai.services.memory.service import MemoryService
    from bonsai.settings import MemorySettings

    service = MemoryService(home, None, MemorySettings(), env={})
    with pytest.raises(MemoryStoreError, match="needs a workspace"):
        service.add("x y z facts", tier="project")


def test_edit_changes_only_what_was_asked(make_service, workspace: Path) -> None:
    original = (
        "---\nname: ci\ndescription: old\ntype: project  # why\nowner: ops\n"
        "updated: 2026-01-01\n---\nCI runs on two cores.\n"
    )
    path = _write(workspace / ".bonsai/memory", "ci", original)
    service = make_service(model=False)
    service.edit("ci", description="CI has two cores and 90 minutes")
    assert path.read_text() == original.replace(
        "description: old", "description: CI has two cores and 90 minutes"
    ).replace("updated: 2026-01-01", "updated: 2026-07-01")


def test_disable_persists_in_front_matter_and_enable_restores_bytes(
    make_service, home: Path
) -> None:
    text = "---\ndescription: d\ntype: user\n---\nbody\n"
    path = _write(home / "memory", "toggle-me", text)
    service = make_service(model=False)
    assert not service.set_enabled("toggle-me", False).enabled
    assert "enabled: false" in path.read_text()
    assert not make_service(model=False).get("toggle-me").enabled  # a fresh service sees it
    service.set_enabled("toggle-me", True)
    assert path.read_text() == text


def test_forget_deletes_the_resolved_entry(make_service, home: Path) -> None:
    path = _write(home / "memory", "gone", "---\ndescription: d\n---\nb\n")
    service = make_service(model=False)
    assert service.forget("gone") == path
    assert not path.exists()
    with pytest.raises(MemoryStoreError, match="no memory entry named 'gone'"):
        service.forget("gone")


def test_malformed_files_are_reported_and_never_touched(make_service, home: Path) -> None:
    bad = _write(home / "memory", "broken", "---\nname: [oops\n---\nbody\n")
    big = _write(home / "memory", "huge", "---\ndescription: d\n---\n" + "z" * 5000)
    _write(home / "memory", "fine", "---\ndescription: ok\n---\nbody\n")
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in (bad, big)}
    service = make_service(model=False)
    problems = {issue.path.name: issue.problem for issue in service.issues()}
    assert problems.keys() == {"broken.md", "huge.md"}
    assert "invalid YAML" in problems["broken.md"] and "5000 bytes" in problems["huge.md"]
    assert [e.name for e in service.list()] == ["fine"]
    service.sync()
    service.search("anything oops body", 5)
    from bonsai.services.memory import MemoryWriteArgs, MemoryWriteError

    with pytest.raises(MemoryWriteError, match="not a readable memory entry"):
        service.write(MemoryWriteArgs(name="broken", fact="replace it", tier="user"))
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in (bad, big)} == before


def test_a_symlinked_project_store_is_refused(
    make_service, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    private = _write(outside, "private-notes", "---\ndescription: secret\n---\nkeep out\n")
    (workspace / ".bonsai").mkdir()
    os.symlink(outside, workspace / ".bonsai" / "memory")
    service = make_service(model=False)
    assert service.list() == []  # nothing is read through the link either
    assert "store ignored" in service.issues()[0].problem
    with pytest.raises(MemoryStoreError, match="refusing to write through a symbolic link"):
        service.add("facts about the project layout rules", tier="project")
    assert list(outside.iterdir()) == [private]


@pytest.mark.parametrize(
    ("lines", "ignored"),
    [
        ([".bonsai/"], True),
        ([".bonsai"], True),
        (["/.bonsai/"], True),
        ([".bonsai/", "!.bonsai/memory/"], True),  # git cannot re-include below an ignored dir
        ([".bonsai/*", "!.bonsai/memory/"], False),
        (["*.md"], True),
        (["node_modules/", "*.log"], False),
        ([], False),
    ],
)
def test_gitignore_advisory(workspace: Path, lines: list[str], ignored: bool) -> None:
    (workspace / ".gitignore").write_text("\n".join(lines) + "\n")
    advisory = gitignore_advisory(workspace)
    assert (advisory is not None) == ignored
    if advisory:
        assert "!.bonsai/memory/" in advisory and ".bonsai/*" in advisory
    assert (workspace / ".gitignore").read_text() == "\n".join(lines) + "\n"


def test_no_gitignore_no_advisory(workspace: Path) -> None:
    assert gitignore_advisory(workspace) is None


def test_edit_refuses_an_overlong_description(make_service, home: Path) -> None:
    path = _write(home / "memory", "short", "---\ndescription: d\n---\nb\n")
    service = make_service(model=False)
    from bonsai.services.memory import MemoryWriteError

    with pytest.raises(MemoryWriteError, match="longer than 160"):
        service.edit("short", description="x" * 161)
    assert path.read_text() == "---\ndescription: d\n---\nb\n"
