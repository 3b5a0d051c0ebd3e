"""The privacy of ``BONSAI_HOME``: a 0700 directory whose files are 0600, whatever the umask.

**Invariant:** another local user can read nothing bonsai writes in its home.
The daemon runs with umask 077 (so SQLite's WAL and SHM, logs, caches and
spilled outputs are born private); the user's own umask is remembered and
given back to tool processes and to files written into a workspace.
At start a home that is too open is tightened, and :func:`secure_home` says
what it changed so the daemon can report it once.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

PRIVATE_UMASK = 0o077
_user_umask: int | None = None


def user_umask() -> int:
    """The umask the user started bonsai with (before :func:`use_private_umask`)."""
    if _user_umask is not None:
        return _user_umask
    try:  # Linux: read it without changing it (no window for another thread)
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    current = os.umask(0o077)
    os.umask(current)
    return current


def use_private_umask() -> int:
    """Make every file this process creates private; returns the user's umask."""
    global _user_umask
    previous = os.umask(PRIVATE_UMASK)
    if _user_umask is None:
        _user_umask = previous
    return _user_umask


def restore_user_umask() -> None:
    """For a child process (``preexec_fn``): create files as the user would."""
    os.umask(user_umask())


def workspace_file_mode() -> int:
    """The mode a new file in a workspace gets: what the user's umask allows."""
    return 0o666 & ~user_umask()


@dataclass
class Tightened:
    """What :func:`secure_home` changed (empty when the home was already private)."""

    paths: list[tuple[Path, int, int]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.paths)

    def describe(self, home: Path) -> str:
        shown = ", ".join(
            f"{_rel(path, home)} {old:o}→{new:o}" for path, old, new in self.paths[:4]
        )
        more = f" and {len(self.paths) - 4} more" if len(self.paths) > 4 else ""
        return f"{home} was readable by other users; tightened {shown}{more}"


def _rel(path: Path, home: Path) -> str:
    return "." if path == home else str(path.relative_to(home))


def is_private(mode: int) -> bool:
    return not mode & (stat.S_IRWXG | stat.S_IRWXO)


def secure_home(home: Path) -> Tightened:
    """Create ``home`` 0700 or tighten it and everything in it (never following symlinks).

    Raises OSError (PermissionError when the user cannot create or change it).
    """
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    changed = Tightened()
    _tighten(home, changed)
    for root, dirs, files in os.walk(home):
        for name in dirs:
            _tighten(Path(root) / name, changed)
        for name in files:
            _tighten(Path(root) / name, changed)
    return changed


def _tighten(path: Path, changed: Tightened) -> None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode) or info.st_uid != os.getuid():
        return  # never chmod through a link, nor someone else's file
    mode = stat.S_IMODE(info.st_mode)
    if is_private(mode):
        return
    new = mode & ~(stat.S_IRWXG | stat.S_IRWXO)  # only ever removes access
    os.chmod(path, new, follow_symlinks=False)
    changed.paths.append((path, mode, new))


def open_private(path: Path) -> None:
    """Create ``path`` 0600 if missing; tighten it if it exists and is ours."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
    try:
        info = os.fstat(fd)
        if info.st_uid == os.getuid() and not is_private(info.st_mode):
            os.fchmod(fd, 0o600)
    finally:
        os.close(fd)
