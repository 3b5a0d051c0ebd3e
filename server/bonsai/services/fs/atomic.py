"""The one atomic write: a reader sees the old bytes or the new ones, never a mix.

The bytes go to a temporary file with an unpredictable name in the target's
own directory, created with ``O_CREAT | O_EXCL | O_NOFOLLOW`` (so a planted file
or symlink of that name makes the create fail instead of being written
through), are fsync'ed, and then renamed over the target relative to the
directory's descriptor. The rename replaces the directory entry: an existing
symlink at the target's name is replaced, never written through. On any
failure the temporary file is removed and the target is untouched.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from bonsai.services.privacy import workspace_file_mode

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_TRIES = 16
_NAME_ROOM = 200  # keep the temporary name under NAME_MAX for long target names


def write_at(dir_fd: int, name: str, data: bytes, *, mode: int | None = None) -> None:
    """Replace ``name`` in the directory ``dir_fd`` with ``data``, atomically.

    ``mode``: the new file's exact permission bits, whatever the umask; ``None``
    keeps an existing regular file's bits, or for a new file gives the usual
    ``0o666`` less the umask."""
    if mode is None:
        mode = workspace_file_mode()  # a new file: 0o666 less the user's umask
        with contextlib.suppress(FileNotFoundError):
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if stat.S_ISREG(st.st_mode):
                mode = stat.S_IMODE(st.st_mode)
    tmp, fd = _create_temporary(dir_fd, name)
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    with contextlib.suppress(OSError):  # some file systems refuse fsync on directories
        os.fsync(dir_fd)


def atomic_write(path: Path, data: bytes, *, mode: int | None = 0o600) -> None:
    """Replace ``path`` with ``data`` atomically, creating missing parent folders.

    For bonsai's own files (config, caches, ``daemon.json``): private by default.
    Workspace files go through :func:`write_at` with a confined directory."""
    path.parent.mkdir(parents=True, exist_ok=True)
    dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        write_at(dir_fd, path.name, data, mode=mode)
    finally:
        os.close(dir_fd)


def _create_temporary(dir_fd: int, name: str) -> tuple[str, int]:
    stem = name[:_NAME_ROOM]
    for _ in range(_TRIES):
        tmp = f".{stem}.{secrets.token_hex(8)}.tmp"
        try:
            return tmp, os.open(tmp, _CREATE, 0o600, dir_fd=dir_fd)
        except FileExistsError:
            continue
    raise FileExistsError(f"could not create a temporary file beside {name!r}")
