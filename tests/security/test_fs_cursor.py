"""``DirCursor``: a chunk's files opened relative to directory descriptors held
open along the path, on a real hostile tree. For every path it answers as
``Workspace.open_file`` does (the same bytes, or the same kind of refusal), and
a directory swapped for a symlink out of the workspace while the cursor holds
it never leads a read outside."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bonsai.services.fs.confined import DirCursor, Workspace, path_order, read_fd

SECRET = b"outside secret"


def _hostile_tree(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    for d in ("src/pkg/deep", "src/pkg-x", "other", "a!b"):
        (ws / d).mkdir(parents=True)
    (tmp_path / "secret.py").write_bytes(SECRET)
    (tmp_path / "secretdir").mkdir()
    (tmp_path / "secretdir" / "mod.py").write_bytes(SECRET)
    for rel in ("top.py", "src/a.py", "src/pkg/b.py", "src/pkg/deep/c.py", "src/pkg-x/d.py"):
        (ws / rel).write_bytes(f"inside {rel}".encode())
    (ws / "a!b" / "e.py").write_bytes(b"inside a!b/e.py")
    os.symlink("../../secret.py", ws / "src" / "file_out.py")  # a file linked out
    os.symlink(tmp_path / "secret.py", ws / "src" / "file_out_abs.py")
    os.symlink(tmp_path / "secretdir", ws / "src" / "dir_out")  # a directory linked out
    os.symlink("a.py", ws / "src" / "file_in.py")  # links that stay inside: followed
    os.symlink("pkg", ws / "src" / "dir_in")
    os.symlink("loop", ws / "src" / "loop.py")
    os.link(tmp_path / "secret.py", ws / "src" / "hard.py")  # a second name outside
    os.mkfifo(ws / "src" / "fifo.py")
    return ws


PATHS = [
    "top.py",
    "src/a.py",
    "src/pkg/b.py",
    "src/pkg/deep/c.py",
    "src/pkg-x/d.py",
    "a!b/e.py",
    "src/file_out.py",
    "src/file_out_abs.py",
    "src/dir_out/mod.py",
    "src/file_in.py",
    "src/dir_in/b.py",
    "src/dir_in/deep/c.py",
    "src/loop.py",
    "src/hard.py",
    "src/fifo.py",
    "src/pkg",
    "src/missing.py",
    "src/nodir/x.py",
    "src/a.py/x.py",
    "src/../top.py",
    "src/../../secret.py",
    "./src/a.py",
    "src//a.py",
    "a\0b.py",
    "x" * 300,
]


def _answer(open_one, rel: str) -> tuple[str, bytes | str]:  # type: ignore[no-untyped-def]
    try:
        return "read", read_fd(open_one(rel))
    except (OSError, ValueError) as exc:
        return "refused", type(exc).__name__


@pytest.mark.parametrize("order", ["path", "reversed", "given"])
def test_the_cursor_answers_as_open_file_for_every_path(tmp_path: Path, order: str) -> None:
    ws = _hostile_tree(tmp_path)
    paths = {
        "path": sorted(PATHS, key=path_order),
        "reversed": sorted(PATHS, key=path_order, reverse=True),
        "given": PATHS,
    }[order]
    with Workspace(ws) as root:
        walked = {rel: _answer(lambda r: root.open_file(r)[0], rel) for rel in paths}
        held = len(os.listdir("/proc/self/fd"))
        with DirCursor(root) as cursor:
            cursored = {rel: _answer(cursor.open_file, rel) for rel in paths}
    assert cursored == walked
    assert all(answer[1] != SECRET for answer in cursored.values())
    assert cursored["src/dir_in/deep/c.py"] == ("read", b"inside src/pkg/deep/c.py")
    for rel in ("src/file_out.py", "src/file_out_abs.py", "src/dir_out/mod.py", "src/hard.py"):
        assert cursored[rel] == ("refused", "ConfinementError"), rel
        assert len(os.listdir("/proc/self/fd")) <= held  # nothing left open after close


def test_a_held_directory_swapped_for_a_symlink_out_is_never_read_through(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "pkg").mkdir(parents=True)
    (ws / "pkg" / "a.py").write_bytes(b"inside a")
    (ws / "pkg" / "b.py").write_bytes(b"inside b")
    (tmp_path / "evil").mkdir()
    (tmp_path / "evil" / "b.py").write_bytes(SECRET)
    (tmp_path / "evil" / "c.py").write_bytes(SECRET)
    (ws / "top.py").write_bytes(b"top")
    with Workspace(ws) as root, DirCursor(root) as cursor:
        assert read_fd(cursor.open_file("pkg/a.py")) == b"inside a"  # "pkg" is held now
        os.rename(ws / "pkg", ws / "moved")
        os.symlink(tmp_path / "evil", ws / "pkg")
        # the held descriptor is the directory that was there (now "moved", inside)
        assert read_fd(cursor.open_file("pkg/b.py")) == b"inside b"
        # a file the held directory does not have: its name is not looked up elsewhere
        with pytest.raises(FileNotFoundError):
            cursor.open_file("pkg/c.py")
        # once the cursor leaves the directory, the walk from the root refuses the link
        assert read_fd(cursor.open_file("top.py")) == b"top"
        with pytest.raises(ValueError, match="outside the workspace"):
            cursor.open_file("pkg/b.py")


def test_a_file_swapped_for_a_symlink_out_in_a_held_directory_is_refused(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "pkg").mkdir(parents=True)
    for name in ("a.py", "b.py"):
        (ws / "pkg" / name).write_bytes(b"inside")
    (tmp_path / "secret.py").write_bytes(SECRET)
    with Workspace(ws) as root, DirCursor(root) as cursor:
        assert read_fd(cursor.open_file("pkg/a.py")) == b"inside"
        (ws / "pkg" / "b.py").unlink()
        os.symlink(tmp_path / "secret.py", ws / "pkg" / "b.py")
        with pytest.raises(ValueError, match="outside the workspace"):
            cursor.open_file("pkg/b.py")
