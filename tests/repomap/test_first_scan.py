"""The first map's choice reads the sources, not only their paths: a file that
defines a name the task writes, or holds the task's rare words, is parsed first
even when its path says nothing and nothing imports it (``first_scan.py``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from repomap_helpers import write_repo

from bonsai.services.repomap import first_map
from bonsai.services.repomap.discovery import IgnoreRules, discover
from bonsai.services.repomap.first_map import first_count, priority_files
from bonsai.services.repomap.first_scan import (
    defined_names,
    definition_scores,
    read_sources,
    word_scores,
)

MODULES = 240
LEAF = "tools/leaf_utility.py"


def _choice(root: Path, task: str) -> list[str]:
    files = discover(IgnoreRules(root, set(), 1 << 20)).files
    return priority_files(root, files, first_count(len(files)), (), task)


def _repo_with_notes(tmp_path: Path) -> Path:
    """The synthetic repository, plus 30 short files whose comments speak of the
    leaf's routine (so its words alone do not single the leaf out)."""
    root = write_repo(tmp_path / "repo", modules=MODULES)
    notes = root / "notes"
    notes.mkdir()
    for k in range(30):
        (notes / f"n{k:02d}.py").write_text("# obscure_checksum_routine\n")
    return root


def test_the_file_defining_a_name_the_task_writes_is_parsed_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _repo_with_notes(tmp_path)
    task = "Calling obscure_checksum_routine() on an empty payload gives 0"
    assert LEAF in _choice(root, task)
    monkeypatch.setattr(first_map, "W_DEFINES", 0.0)
    assert LEAF not in _choice(root, task)  # 30 notes hold the name too: words alone miss it


def test_the_file_holding_the_tasks_rare_words_is_parsed_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A behaviour-described task: no path, no defined name, but a word only the
    leaf's text has (a part of a name there)."""
    root = write_repo(tmp_path / "repo", modules=MODULES)
    task = "The checksum is wrong when the payload is empty"
    assert LEAF in _choice(root, task)
    monkeypatch.setattr(first_map, "W_WORDS", 0.0)
    assert LEAF not in _choice(root, task)


def test_words_in_tests_do_not_choose_the_test(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo", modules=MODULES)
    (root / "tests").mkdir()
    (root / "tests" / "test_misc.py").write_text("# checksum checksum payload checksum\n")
    chosen = _choice(root, "The checksum is wrong when the payload is empty")
    assert LEAF in chosen
    assert "tests/test_misc.py" not in chosen


def test_a_file_swapped_for_a_symlink_out_is_not_read(tmp_path: Path) -> None:
    """A hostile repository: a source replaced by a link to a file outside the
    workspace after discovery; its outside words choose nothing."""
    root = write_repo(tmp_path / "repo", modules=MODULES)
    outside = tmp_path / "secret.py"
    outside.write_text("def zanzibar_quokka():\n    'zanzibar quokka'\n")
    files = discover(IgnoreRules(root, set(), 1 << 20)).files
    victim = root / "pkg" / "mod_007.py"
    victim.unlink()
    os.symlink(outside, victim)
    task = "zanzibar_quokka() breaks: the zanzibar quokka is wrong"
    paths = [c.path for c in files]
    sources = read_sources(root, paths, [True] * len(paths))
    assert "pkg/mod_007.py" not in sources.scan.files
    assert b"zanzibar" not in sources.scan.text
    assert word_scores(sources.scan, task) == {}
    assert definition_scores(sources.scan, task) == {}
    assert len(priority_files(root, files, first_count(len(files)), (), task)) > 0


def test_definitions_are_read_per_language_and_case_blind(tmp_path: Path) -> None:
    root = tmp_path / "r"
    root.mkdir()
    (root / "a.py").write_text("class ParseHeader:\n    def split_fields(self):\n        pass\n")
    (root / "b.rs").write_text("pub fn split_fields() {}\nstruct Cart;\n")
    (root / "c.go").write_text("func TotalCount() int { return 0 }\n")
    (root / "d.py").write_text("# undef split_fields: not a definition\nx = 'def'\n")
    paths = ["a.py", "b.rs", "c.go", "d.py"]
    scan = read_sources(root, paths, [True] * 4).scan
    names = defined_names(scan)
    assert names[b"split_fields"] == [0, 1]
    assert names[b"parseheader"] == [0]
    assert names[b"cart"] == [1]
    assert names[b"totalcount"] == [2]
    assert b"split_fields:" not in names and len(names[b"split_fields"]) == 2
