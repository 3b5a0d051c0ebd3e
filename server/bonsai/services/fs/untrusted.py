"""Bytes of a path a hostile repository may have planted, read without hanging.

A workspace can hold a FIFO, a device node, or a symlink to one (``/dev/zero``,
``/dev/stdin``, a named pipe outside): a plain ``read_bytes`` blocks forever or
fills the memory. These helpers open with ``O_NONBLOCK`` and read only regular
files; a symlink's own hash is its target string (what git compares), never
what it points at.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
DELETED = "deleted"


def regular_bytes(path: Path) -> bytes | None:
    """The bytes of ``path`` if it is (or links to) a regular file, else None."""
    try:
        fd = os.open(path, _FLAGS)
    except OSError:
        return None
    with os.fdopen(fd, "rb", closefd=True) as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        try:
            return handle.read()
        except OSError:
            return None


def entry_hash(path: Path) -> str:
    """sha256 of a working-tree entry as git sees it: a symlink's target string,
    a regular file's bytes (streamed); other kinds are named, never read."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return DELETED
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"
    if stat.S_ISLNK(info.st_mode):
        try:
            return hashlib.sha256(os.fsencode(os.readlink(path))).hexdigest()
        except OSError as exc:
            return f"unreadable: {exc.strerror or exc}"
    if stat.S_ISDIR(info.st_mode):
        return "directory"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file"
    try:
        fd = os.open(path, _FLAGS | os.O_NOFOLLOW)
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"
    with os.fdopen(fd, "rb", closefd=True) as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped since the lstat
            return "not a regular file"
        try:
            return hashlib.file_digest(handle, "sha256").hexdigest()
        except OSError as exc:
            return f"unreadable: {exc.strerror or exc}"


def entry_stat(path: Path) -> tuple[int, int] | None:
    """(mtime_ns, size) of the entry itself (a symlink is not followed)."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size)
