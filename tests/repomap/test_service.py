"""RepoMapService end to end on a synthetic repository: budget, determinism,
named files/identifiers, the cache-stability rule, the CLI."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from repomap_helpers import ServiceFactory, chars4

from bonsai.cli.repomap import add_repomap_command, repomap_command
from bonsai.settings import RepoMapSettings


@pytest.mark.parametrize("budget", [256, 512, 1024])
def test_map_fits_budget_within_five_percent(repo: Path, make_service: ServiceFactory, budget: int):
    result = make_service(repo).get(tokens=budget)
    assert result.tokens == chars4(result.text)
    assert 0.95 * budget <= result.tokens <= budget


def test_default_budgets_follow_settings(repo: Path, make_service: ServiceFactory):
    settings = RepoMapSettings(tokens=150, tokens_no_files=400, workers=1)
    service = make_service(repo, settings=settings)
    assert 0.95 * 400 <= service.get().tokens <= 400
    assert 0.95 * 150 <= service.get(chat_files=["pkg/core.py"]).tokens <= 150


def test_identical_inputs_give_identical_bytes(
    repo: Path, tmp_path: Path, make_service: ServiceFactory
):
    a = make_service(repo, tmp_path / "a.db").get(tokens=700, mentions="fix Widget012")
    b = make_service(repo, tmp_path / "b.db").get(tokens=700, mentions="fix Widget012")
    assert a.text == b.text and a.text
    assert a.files == b.files


def test_core_file_leads_without_signals(repo: Path, make_service: ServiceFactory):
    result = make_service(repo).get(tokens=300)
    assert result.files[0].path == "pkg/core.py"
    assert "│class CoreConfig:" in result.text


def test_named_file_is_shown(repo: Path, make_service: ServiceFactory):
    service = make_service(repo)
    assert "tools/leaf_utility.py" not in service.get(tokens=200).text
    named = service.get(tokens=200, mentions="The code in leaf_utility.py looks wrong")
    assert "tools/leaf_utility.py:" in named.text
    assert named.changed and "tools/leaf_utility.py" in named.reason


def test_named_identifier_reaches_its_definition(repo: Path, make_service: ServiceFactory):
    service = make_service(repo)
    result = service.get(tokens=200, mentions="obscure_checksum_routine overflows on big input")
    assert "│def obscure_checksum_routine(data: bytes) -> int:" in result.text
    leaf = next(f for f in result.files if f.path == "tools/leaf_utility.py")
    assert "obscure_checksum_routine" in [t.name for t in leaf.tags]


def test_files_in_conversation_are_left_out(repo: Path, make_service: ServiceFactory):
    result = make_service(repo).get(tokens=400, chat_files=[str(repo / "pkg" / "core.py")])
    assert "pkg/core.py" not in result.text
    assert all(f.path != "pkg/core.py" for f in result.files)


def test_unrelated_edit_keeps_the_text(repo: Path, make_service: ServiceFactory):
    service = make_service(repo)
    first = service.get(tokens=300)
    assert first.changed and not first.cached
    shown = {f.path for f in first.files}
    assert "tools/leaf_utility.py" not in shown
    leaf = repo / "tools" / "leaf_utility.py"
    leaf.write_text(leaf.read_text() + "\n\ndef another_leaf_helper():\n    return 2\n")
    assert service.update_paths([leaf]).parsed == 1
    again = service.get(tokens=300)
    assert again.text == first.text
    assert (again.changed, again.cached) == (False, True)
    assert again.reason.startswith("unchanged inputs")


def test_definition_change_in_shown_file_rerenders(repo: Path, make_service: ServiceFactory):
    service = make_service(repo)
    service.get(tokens=300)
    core = repo / "pkg" / "core.py"
    core.write_text(core.read_text().replace("def core_helper(value):", "def core_helper(v, k):"))
    service.update_paths([core])
    result = service.get(tokens=300)
    assert result.changed
    assert result.reason == "pkg/core.py changed its definitions"
    assert "│def core_helper(v, k):" in result.text


def test_budget_change_rerenders(repo: Path, make_service: ServiceFactory):
    service = make_service(repo)
    service.get(tokens=300)
    result = service.get(tokens=600)
    assert result.changed and result.reason == "token budget changed 300 -> 600"


def test_negative_budget_is_rejected(repo: Path, make_service: ServiceFactory):
    with pytest.raises(ValueError, match="token budget"):
        make_service(repo).get(tokens=-1)


def test_missing_workspace_is_a_clear_error(tmp_path: Path, make_service: ServiceFactory):
    with pytest.raises(NotADirectoryError, match="not a directory"):
        make_service(tmp_path / "nope")


def test_workspace_without_definitions_lists_paths(tmp_path: Path, make_service: ServiceFactory):
    """Only prose and data files: no definition anywhere, still a map of paths."""
    ws = tmp_path / "docs_only"
    ws.mkdir()
    (ws / "AGENTS.md").write_text("# Rules\nkeep functions short\n")
    (ws / "notes.txt").write_text("nothing to parse here\n")
    result = make_service(ws).get(tokens=256)
    assert "AGENTS.md" in result.text and "notes.txt" in result.text


def test_progress_is_reported(repo: Path, make_service: ServiceFactory):
    seen: list[tuple[int, int]] = []
    make_service(repo).build(progress=lambda done, total, _msg: seen.append((done, total)))
    assert seen[-1] == (64, 64)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def _cli(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bonsai")
    add_repomap_command(parser.add_subparsers(dest="command"))
    return parser.parse_args(argv)


def test_cli_json_shape(repo: Path, tmp_path: Path, capsys):
    args = _cli(
        [
            "repomap",
            str(repo),
            "--tokens",
            "300",
            "--json",
            "--cache",
            str(tmp_path / "cli.db"),
            "--mention",
            "Widget005",
        ]
    )
    assert args.func(args, counter=chars4) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"text", "files", "tokens", "builtMs", "cached"}
    assert set(out["files"][0]) == {"path", "rank", "tags"}
    assert "pkg/mod_005.py:" in out["text"]
    assert out["tokens"] <= 300


def test_cli_bad_path(tmp_path: Path, capsys):
    args = _cli(["repomap", str(tmp_path / "missing")])
    assert repomap_command(args, counter=chars4) == 2
    assert "not a directory" in capsys.readouterr().err
