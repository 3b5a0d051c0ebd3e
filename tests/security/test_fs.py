"""The file-system primitives on a real temporary tree: the one atomic write and
workspace paths resolved through directory descriptors."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from bonsai.services.fs.atomic import atomic_write, write_at
from bonsai.services.fs.confined import ConfinementError, Workspace


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("umask", [0o022, 0o000])
def test_atomic_write_gives_the_exact_mode_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        atomic_write(tmp_path / "private.json", b"{}")
        atomic_write(tmp_path / "shared.txt", b"x", mode=0o644)
    finally:
        os.umask(old)
    assert mode_of(tmp_path / "private.json") == 0o600
    assert mode_of(tmp_path / "shared.txt") == 0o644


def test_mode_none_keeps_an_existing_files_bits(tmp_path: Path) -> None:
    path = tmp_path / "script.sh"
    path.write_text("old")
    path.chmod(0o750)
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        write_at(fd, "script.sh", b"new", mode=None)
    finally:
        os.close(fd)
    assert path.read_text() == "new" and mode_of(path) == 0o750


def test_atomic_write_replaces_a_symlink_instead_of_writing_through_it(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("untouched")
    os.symlink(outside, tmp_path / "target")
    for planted in (".target.tmp", "target.tmp", ".target.bonsai-tmp"):
        os.symlink(outside, tmp_path / planted)
    atomic_write(tmp_path / "target", b"fresh")
    assert outside.read_text() == "untouched"
    assert not (tmp_path / "target").is_symlink() and (tmp_path / "target").read_bytes() == b"fresh"
    leftovers = [
        p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp") and not p.is_symlink()
    ]
    assert leftovers == [], "no temporary file is left behind"


def test_links_inside_are_followed_and_links_out_refused(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("inside")
    (tmp_path / "secret").write_text("outside")
    os.symlink("src/a.py", ws / "rel_link")
    os.symlink(ws / "src", ws / "abs_dir_link")
    os.symlink("../secret", ws / "out")
    os.symlink("out", ws / "chain")
    os.symlink("loop", ws / "loop")
    with Workspace(ws) as root:
        for raw, rel in (
            ("rel_link", "src/a.py"),
            ("abs_dir_link/a.py", "src/a.py"),
            ("src/../src/a.py", "src/a.py"),
        ):
            fd, real = root.open_file(raw)
            os.close(fd)
            assert real == rel, raw
        for raw in ("out", "chain", "../secret", str(tmp_path / "secret"), "src/../../secret"):
            with pytest.raises(ConfinementError, match="outside the workspace"):
                root.open_file(raw)
        with pytest.raises(ConfinementError, match="symbolic links"):
            root.open_file("loop")
        with pytest.raises(ConfinementError, match="NUL"):
            root.open_file("a\0b")
        with pytest.raises(ConfinementError, match="limit"):
            root.open_file("x" * 300)


def test_a_hard_linked_file_is_not_read(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "secret").write_text("outside")
    os.link(tmp_path / "secret", ws / "hard")
    with Workspace(ws) as root, pytest.raises(ConfinementError, match="hard links"):
        root.open_file("hard")
