"""Crash-safe file replacement: a reader sees the old bytes or the new ones,
never a torn mix."""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path


def atomic_write(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Write ``data`` to ``path`` atomically.

    The bytes go to a hidden temporary file in the same directory, are
    flushed and fsync'ed, then ``os.replace`` swaps it in (atomic on POSIX and
    Windows within one file system) and the directory entry is fsync'ed. On
    any failure the temporary file is removed and the original is untouched."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
