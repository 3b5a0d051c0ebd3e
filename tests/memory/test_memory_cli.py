"""CLI functions: argument parsing, output shapes, exit codes."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pytest

from bonsai.cli.memory import add_memory_commands


@pytest.fixture
def run(home: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch, tiny_model_dir: Path):
    monkeypatch.setenv("BONSAI_HOME", str(home))
    monkeypatch.delenv("BONSAI_MEMORY_EMBEDDINGS", raising=False)
    shutil.copytree(tiny_model_dir, home / "cache" / "memory-model")
    parser = argparse.ArgumentParser(prog="bonsai")
    add_memory_commands(parser.add_subparsers(dest="command", required=True))

    def invoke(*argv: str) -> int:
        args = parser.parse_args([*argv, "--workspace", str(workspace)])
        return int(args.func(args))

    return invoke


def test_search_json_shape(run, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("remember", "Store timestamps in utc, never local time.") == 0
    assert run("remember", "--project", "ponyc is built with make configure then make build.") == 0
    capsys.readouterr()
    assert run("memory", "search", "utc", "timestamps", "--json", "--limit", "2") == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"results", "embeddings"} and data["embeddings"] == "on"
    top = data["results"][0]
    assert set(top) == {"name", "tier", "score", "lanes"}
    assert set(top["lanes"]) == {"bm25", "embedding"}
    assert (top["name"], top["tier"]) == ("store-timestamps-utc-never-local-time", "user")
    assert isinstance(top["score"], float) and len(data["results"]) <= 2


def test_search_json_reports_bm25_only(run, home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.rmtree(home / "cache" / "memory-model")
    run("remember", "Store timestamps in utc.")
    capsys.readouterr()
    run("memory", "search", "utc", "--json")
    data = json.loads(capsys.readouterr().out)
    assert data["embeddings"].startswith("off: no embedding model")
    assert data["results"][0]["lanes"] == {
        "bm25": data["results"][0]["lanes"]["bm25"],
        "embedding": None,
    }


def test_remember_list_show_forget(
    run, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("remember", "--project", "--name", "ci-cores", "CI has two cores.") == 0
    out = capsys.readouterr().out
    assert "+++ b/.bonsai/memory/ci-cores.md" in out
    assert out.rstrip().endswith("(project memory: .bonsai/memory/ci-cores.md)")
    run("memory", "list")
    listing = capsys.readouterr().out
    assert listing.startswith("memory: 1 entry (1 project, 0 user): ci-cores")
    run("memory", "show", "ci-cores")
    shown = capsys.readouterr().out
    assert shown.endswith("---\nCI has two cores.\n") and "type: project" in shown
    run("memory", "edit", "ci-cores")
    assert capsys.readouterr().out.strip() == str(workspace / ".bonsai/memory/ci-cores.md")
    assert run("memory", "forget", "ci-cores") == 0
    assert not (workspace / ".bonsai/memory/ci-cores.md").exists()


def test_refusals_exit_1_with_a_message(run, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("memory", "show", "nope") == 1
    assert "bonsai memory: no memory entry named 'nope'" in capsys.readouterr().err
    run("remember", "Prefer ruff for formatting python.")
    assert run("remember", "prefer Ruff for python formatting!") == 1
    assert "similar to the existing user entry" in capsys.readouterr().err


def test_disable_enable_and_status(
    run, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / ".gitignore").write_text(".bonsai/\n")
    run("remember", "--name", "utc", "Store timestamps in utc.")
    run("memory", "disable", "utc")
    run("memory", "status")
    out = capsys.readouterr().out
    assert "utc: disabled" in out and "disabled:       utc" in out
    assert "embeddings:     on" in out and "note:" in out and "!.bonsai/memory/" in out
    run("memory", "status", "--json")
    assert json.loads(capsys.readouterr().out)["disabled"] == ["utc"]


def test_list_json_has_entries_and_problems(
    run, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("remember", "--project", "--name", "ci-cores", "CI has two cores.") == 0
    broken = workspace / ".bonsai" / "memory" / "broken.md"
    broken.write_text("---\ndescription: fine\ntags: [unclosed\n---\nbody\n", encoding="utf-8")
    capsys.readouterr()
    assert run("memory", "list", "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert [(e["name"], e["tier"], e["body"]) for e in data["entries"]] == [
        ("ci-cores", "project", "CI has two cores.")
    ]
    (issue,) = data["issues"]
    assert issue["path"].endswith("broken.md")
    # the YAML error names the file's own line and column (where YAML noticed the open list)
    assert "at line 4, column 1" in issue["problem"]
