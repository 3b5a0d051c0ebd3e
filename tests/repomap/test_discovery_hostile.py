"""Hostile ``.gitignore`` files: the walk reads them confined to the workspace,
never blocks on one, and a bad one costs its own patterns at most, never the map."""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

import pytest

from bonsai.services.repomap.discovery import IgnoreRules, discover


def _paths(root: Path, under: str = "") -> list[str]:
    return [c.path for c in discover(IgnoreRules(root, set()), under).files]


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "sub").mkdir(parents=True)
    for rel in ("main.py", "debug.log", "sub/mod.py", "sub/trace.log"):
        (root / rel).write_text("x = 1\n")
    return root


def test_a_gitignore_linked_out_of_the_workspace_is_not_read(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = _repo(tmp_path)
    (tmp_path / "outside").write_text("*.py\n")
    (root / "sub" / ".gitignore").symlink_to(tmp_path / "outside")
    with caplog.at_level(logging.WARNING):
        found = _paths(root)
    assert found == ["debug.log", "main.py", "sub/mod.py", "sub/trace.log"]
    assert "sub/.gitignore not used" in caplog.text and "outside the workspace" in caplog.text
    assert not IgnoreRules(root, set()).excluded("sub/mod.py")  # the per-path answer too


def test_a_gitignore_linked_to_a_file_inside_is_followed(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / "rules.txt").write_text("*.log\n")
    (root / "sub" / ".gitignore").symlink_to("../rules.txt")
    assert _paths(root) == ["debug.log", "main.py", "rules.txt", "sub/.gitignore", "sub/mod.py"]


def test_a_gitignore_that_is_a_directory_is_walked_as_one(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / ".gitignore").mkdir()
    (root / ".gitignore" / "inner.py").write_text("*.py\n")
    assert _paths(root) == [
        ".gitignore/inner.py",
        "debug.log",
        "main.py",
        "sub/mod.py",
        "sub/trace.log",
    ]


def test_invalid_patterns_are_skipped_with_a_warning_the_others_stand(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = _repo(tmp_path)
    (root / ".gitignore").write_text("\\\n*.log\n!\n")
    with caplog.at_level(logging.WARNING):
        assert _paths(root) == [".gitignore", "main.py", "sub/mod.py"]
    assert caplog.text.count("is not valid; skipped") == 2


def test_a_binary_gitignore_keeps_its_readable_lines(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    noise = bytes(range(256)) * 40 + b"\\\n\xff\xfe\x00\n"
    (root / "sub" / ".gitignore").write_bytes(noise + b"\n*.log\n" + noise)
    assert _paths(root) == ["debug.log", "main.py", "sub/.gitignore", "sub/mod.py"]


def test_a_huge_gitignore_and_a_100k_character_pattern(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    comments = "# a comment line of a generated file, long enough to weigh\n" * 80_000
    (root / ".gitignore").write_text(comments + "a" * 100_000 + "*\n*.log\n")
    started = time.monotonic()
    assert _paths(root) == ["main.py", "sub/mod.py"]
    assert time.monotonic() - started < 30


def test_a_fifo_named_gitignore_does_not_block_the_walk(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = _repo(tmp_path)
    os.mkfifo(root / "sub" / ".gitignore")
    found: list[list[str]] = []
    with caplog.at_level(logging.WARNING):
        walk = threading.Thread(target=lambda: found.append(_paths(root)), daemon=True)
        walk.start()
        walk.join(20)
    if walk.is_alive():  # the old reader waits for a writer forever: give it one
        with open(root / "sub" / ".gitignore", "w"):
            pass
        walk.join(5)
        pytest.fail("the walk blocked opening a FIFO named .gitignore")
    assert found == [["debug.log", "main.py", "sub/mod.py", "sub/trace.log"]]
    assert "sub/.gitignore not used" in caplog.text


def test_a_subdirectory_walk_sees_the_gitignore_files_above_it(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / ".gitignore").write_text("*.log\n")
    (root / "sub" / ".gitignore").write_text("!trace.log\n")
    assert _paths(root, "sub") == ["sub/.gitignore", "sub/mod.py", "sub/trace.log"]
    (root / "sub" / ".gitignore").write_text("mod.py\n")
    assert _paths(root, "sub") == ["sub/.gitignore"]
