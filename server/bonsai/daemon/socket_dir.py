"""Where a unix socket may live: a directory only its user can change.

**Invariant:** bonsai never changes the mode of a directory it did not create.
A directory bonsai creates for its socket is 0700; an existing one is used
only when no other user can replace the socket in it: owned by the user and
not writable by others, or sticky and owned by the user. The automatic
per-user directory (``/tmp/bonsai-<uid>``) must be the user's own, 0700 and
not a symlink; otherwise the daemon refuses with the reason.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


class UnsafeSocketDir(Exception):
    """A socket directory another user could tamper with; the message says why and what to do."""


def prepare_socket_dir(directory: Path, *, automatic: bool) -> None:
    """Create ``directory`` (0700) or check that an existing one is safe. Raises UnsafeSocketDir."""
    created = _make_missing(directory)
    try:
        info = os.lstat(directory)
    except OSError as error:
        raise UnsafeSocketDir(f"{directory}: {error.strerror}") from None
    if stat.S_ISLNK(info.st_mode):
        raise UnsafeSocketDir(
            f"{directory} is a symbolic link (to {os.readlink(directory)}); another user may "
            "control where it points. Remove it, or pass --socket with a directory you own"
        )
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeSocketDir(f"{directory} is not a directory")
    uid = os.getuid()
    mode = stat.S_IMODE(info.st_mode)
    if info.st_uid != uid:
        raise UnsafeSocketDir(
            f"{directory} belongs to uid {info.st_uid}, not to you (uid {uid}); that user "
            "could move the daemon's socket away. Remove it (as its owner), or pass --socket "
            "with a directory you own"
        )
    if automatic:
        if directory in created and mode != 0o700:
            os.chmod(directory, 0o700)  # ours, just made: the umask may have widened it
        elif mode != 0o700:
            raise UnsafeSocketDir(
                f"{directory} has mode {mode:o}, not 0700; other users may reach the socket. "
                f"Fix it with `chmod 700 {directory}`"
            )
        return
    if directory in created:
        os.chmod(directory, 0o700)
        return
    writable_by_others = mode & (stat.S_IWGRP | stat.S_IWOTH)
    if writable_by_others and not mode & stat.S_ISVTX:
        raise UnsafeSocketDir(
            f"{directory} (mode {mode:o}) is writable by other users, who could replace "
            "the socket. Pass --socket with a directory only you can write"
        )


def _make_missing(directory: Path) -> list[Path]:
    """Create the missing directories of ``directory`` 0700; returns those it created."""
    missing: list[Path] = []
    path = directory
    while not os.path.lexists(path):
        missing.append(path)
        if path.parent == path:
            break
        path = path.parent
    created = []
    for path in reversed(missing):
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue  # raced: checked like any existing directory
        except OSError as error:
            raise UnsafeSocketDir(f"cannot create {path}: {error.strerror}") from None
        created.append(path)
    return created
