"""memory_write: validation, path containment, duplicate guard, diff and note."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bonsai.services.memory import MemoryWriteArgs, MemoryWriteError, tool_schema
from bonsai.services.memory.write_tool import similarity


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("../escape", "contains '..'"),
        ("/etc/passwd", "absolute path"),
        ("~/notes", "absolute path"),
        ("C:\\temp\\x", "absolute path"),
        ("sub/dir", "path separator"),
        ("fact.md", "without the extension"),
        ("Has_Caps", "not kebab-case"),
        ("double--hyphen", "not kebab-case"),
        ("x" * 65, "limit 64"),
        ("", "empty"),
    ],
)
def test_bad_names_are_refused(make_service, name: str, reason: str) -> None:
    service = make_service(model=False)
    # model_construct: the service must validate even arguments that skipped pydantic
    args = MemoryWriteArgs.model_construct(
        name=name, fact="f", description=None, type=None, tier="project"
    )
    with pytest.raises(MemoryWriteError, match=reason):
        service.write(args)


def test_a_symlinked_entry_file_is_not_written_through(
    make_service, workspace: Path, tmp_path: Path
) -> None:
    target = tmp_path / "victim.txt"
    target.write_text("precious")
    store = workspace / ".bonsai" / "memory"
    store.mkdir(parents=True)
    os.symlink(target, store / "innocent.md")
    service = make_service(model=False)
    with pytest.raises(MemoryWriteError, match="symbolic link"):
        service.write(MemoryWriteArgs(name="innocent", fact="overwrite it", tier="project"))
    assert target.read_text() == "precious"


def test_new_entry_gives_a_file_diff_and_a_note(make_service, workspace: Path) -> None:
    service = make_service(model=False)
    plan = service.write(
        MemoryWriteArgs(
            name="ci-budget",
            fact="The CI run has 90 minutes; the test suite must finish within 15.",
            tier="project",
        )
    )
    assert plan.diff.splitlines()[:3] == [
        "--- /dev/null",
        "+++ b/.bonsai/memory/ci-budget.md",
        "@@ -0,0 +1,8 @@",
    ]
    assert "+type: project" in plan.diff
    assert plan.note == (
        "remembered: The CI run has 90 minutes; the test suite must finish within 15. "
        "(project memory: .bonsai/memory/ci-budget.md)"
    )
    assert (workspace / ".bonsai/memory/ci-budget.md").read_text() == plan.new_text


def test_rewriting_a_name_updates_it_with_a_minimal_diff(make_service, workspace: Path) -> None:
    service = make_service(model=False)
    service.write(MemoryWriteArgs(name="ci", fact="CI runs on two cores.", tier="project"))
    plan = service.write(
        MemoryWriteArgs(name="ci", fact="CI runs on two cores and 24 GiB.", tier="project")
    )
    assert not plan.created
    changed = [line for line in plan.diff.splitlines() if line[:1] in "+-"]
    assert changed == [
        "--- a/.bonsai/memory/ci.md",
        "+++ b/.bonsai/memory/ci.md",
        "-description: CI runs on two cores.",
        "+description: CI runs on two cores and 24 GiB.",
        "-CI runs on two cores.",
        "+CI runs on two cores and 24 GiB.",
    ]


def test_near_duplicates_are_refused_naming_the_existing_entry(make_service) -> None:
    service = make_service(model=False)
    service.write(
        MemoryWriteArgs(name="prefers-ruff", fact="Format and lint Python with ruff.", tier="user")
    )
    with pytest.raises(
        MemoryWriteError, match=r"100% similar to the existing user entry 'prefers-ruff'"
    ):
        service.write(
            MemoryWriteArgs(
                name="ruff-please", fact="Formatting and linting python: Ruff!", tier="project"
            )
        )
    # clearly different facts pass
    service.write(MemoryWriteArgs(name="uses-uv", fact="Python packages are managed with uv."))


def test_similarity_definition() -> None:
    assert similarity("Format and lint Python with ruff", "formatting, linting python: ruff") == 1.0
    assert similarity("store dates in UTC", "store prices in euros") == pytest.approx(1 / 5)


def test_oversized_and_empty_facts(make_service) -> None:
    service = make_service(model=False)
    with pytest.raises(MemoryWriteError, match="longer than 4096 bytes"):
        service.write(MemoryWriteArgs(name="big", fact="word " * 1000))
    with pytest.raises(MemoryWriteError, match="the fact is empty"):
        service.write(MemoryWriteArgs(name="blank", fact="   \n  "))


def test_tool_schema_is_json_and_steers_the_model() -> None:
    schema = tool_schema()
    json.dumps(schema)
    assert schema["name"] == "memory_write"
    description = str(schema["description"])
    for excluded in ("code structure", "git history", "AGENTS.md", "current conversation"):
        assert excluded in description
    params = schema["parameters"]
    assert isinstance(params, dict)
    assert set(params["required"]) == {"name", "fact"}
    assert params["properties"]["name"]["pattern"] == "^[a-z0-9]+(?:-[a-z0-9]+)*$"
    assert params["additionalProperties"] is False
