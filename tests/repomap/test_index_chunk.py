"""A chunk is indexed through one confined workspace: a file swapped for a
symlink out of the workspace after discovery (or given a second hard link) is
skipped with a warning, its neighbours in the chunk are indexed, and nothing
outside the workspace is read."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from bonsai.services.repomap.discovery import IgnoreRules, discover
from bonsai.services.repomap.indexer_core import index_chunk, index_file


def test_a_chunk_refuses_what_leaves_the_workspace_and_indexes_the_rest(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    for name in ("a", "b", "c", "d"):
        (root / "pkg" / f"{name}.py").write_text(f"def inside_{name}():\n    pass\n")
    outside = tmp_path / "secret.py"
    outside.write_text("def stolen_secret_function():\n    pass\n")
    candidates = discover(IgnoreRules(root)).files
    (root / "pkg" / "b.py").unlink()
    (root / "pkg" / "b.py").symlink_to(outside)  # swapped after discovery
    os.link(outside, tmp_path / "secret-link.py")
    (root / "pkg" / "d.py").unlink()
    os.link(outside, root / "pkg" / "d.py")  # a hard link to a file outside
    with caplog.at_level(logging.WARNING, logger="bonsai.services.repomap.indexer_core"):
        results = index_chunk(root, [(c, None) for c in candidates])
    by_path = {r.path: r for r in results}
    assert [r.path for r in results] == [c.path for c in candidates]
    assert by_path["pkg/b.py"].outcome == "skipped"
    assert by_path["pkg/d.py"].outcome == "skipped"
    for name in ("a", "c"):
        tags = by_path[f"pkg/{name}.py"].tags
        assert tags is not None
        assert [d.name for d in tags.definitions] == [f"inside_{name}"]
    assert "stolen_secret_function" not in repr(results)
    warned = " ".join(r.getMessage() for r in caplog.records)
    assert "pkg/b.py" in warned and "pkg/d.py" in warned
    # the same outcome file by file, each opening the workspace itself
    one_by_one = [index_file(root, c, None) for c in candidates]
    assert [(r.path, r.outcome, r.tags) for r in one_by_one] == [
        (r.path, r.outcome, r.tags) for r in results
    ]


def test_a_chunk_of_a_vanished_workspace_is_skipped_file_by_file(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("def f():\n    pass\n")
    candidates = discover(IgnoreRules(root)).files
    (root / "a.py").unlink()
    root.rmdir()
    assert [r.outcome for r in index_chunk(root, [(c, None) for c in candidates])] == ["skipped"]


def test_a_directory_swapped_for_a_symlink_out_after_discovery_is_not_read(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The chunk reads its files grouped by directory, each directory opened once:
    a directory replaced by a symlink out of the workspace (and a file that is
    one) is refused file by file, a link to a directory inside is followed, and
    the results keep the chunk's order whatever the order of the reads."""
    root = tmp_path / "repo"
    for d in ("pkg/sub", "lib", "zeta"):
        (root / d).mkdir(parents=True)
    for rel in ("pkg/a.py", "pkg/sub/b.py", "lib/c.py", "zeta/d.py", "top.py"):
        name = rel.rsplit("/", 1)[-1][:-3]
        (root / rel).write_text(f"def inside_{name}():\n    pass\n")
    evil = tmp_path / "evil"
    evil.mkdir()
    for name in ("a", "b", "c", "d"):
        (evil / f"{name}.py").write_text("def stolen_secret_function():\n    pass\n")
    (evil / "sub").mkdir()
    (evil / "sub" / "b.py").write_text("def stolen_secret_function():\n    pass\n")
    candidates = discover(IgnoreRules(root)).files
    os.rename(root / "pkg", root / "pkg-old")  # swapped after discovery
    (root / "pkg").symlink_to(evil)
    os.rename(root / "lib", root / "lib-real")
    (root / "lib").symlink_to("lib-real")  # a link inside: followed, as before
    (root / "zeta" / "d.py").unlink()
    (root / "zeta" / "d.py").symlink_to(evil / "d.py")
    chunk = [(c, None) for c in reversed(candidates)]  # not in path order
    with caplog.at_level(logging.WARNING, logger="bonsai.services.repomap.indexer_core"):
        results = index_chunk(root, chunk)
    assert [r.path for r in results] == [c.path for c, _ in chunk]
    by_path = {r.path: r for r in results}
    for rel in ("pkg/a.py", "pkg/sub/b.py", "zeta/d.py"):
        assert by_path[rel].outcome == "skipped", rel
    for rel, name in (("lib/c.py", "c"), ("top.py", "top")):
        tags = by_path[rel].tags
        assert tags is not None
        assert [d.name for d in tags.definitions] == [f"inside_{name}"]
    assert "stolen_secret_function" not in repr(results)
    warned = " ".join(r.getMessage() for r in caplog.records)
    assert all(rel in warned for rel in ("pkg/a.py", "pkg/sub/b.py", "zeta/d.py"))
    one_by_one = [index_file(root, c, None) for c, _ in chunk]
    assert [(r.path, r.outcome, r.tags) for r in one_by_one] == [
        (r.path, r.outcome, r.tags) for r in results
    ]
