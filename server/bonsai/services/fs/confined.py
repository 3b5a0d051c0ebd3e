"""Paths confined to a workspace, resolved through directory descriptors.

Every component is opened relative to the descriptor of its parent with
``O_NOFOLLOW``, starting from a descriptor of the workspace root. A symlink is
never followed by the kernel: we read it, join its target to the path walked so
far and go on, and a target that leaves the workspace is refused. Because each
step opens relative to a descriptor we already checked, swapping a component
for a symlink between our check and our use makes the open fail (``ELOOP`` or
``ENOTDIR``) instead of leading elsewhere; the walk then starts over, a bounded
number of times.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

MAX_SYMLINKS = 40  # Linux's own bound on links in one path (ELOOP beyond it)
RETRIES = 8  # walks restarted after a component changed under us
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NAME_MAX = 255
_PATH_MAX = 4096


class ConfinementError(ValueError):
    """A path that leaves the workspace, or one the file system cannot take."""


class Changed(Exception):
    """A component changed between two steps of a walk; the caller starts over."""


@dataclass(frozen=True)
class Target:
    """Where a workspace path really is: its parent directory (an open descriptor
    the caller owns) and the last component's name (``""`` for the root itself).
    ``parts`` are the real components from the root, symlinks resolved."""

    dir_fd: int
    name: str
    parts: tuple[str, ...]

    @property
    def rel(self) -> str:
        return "/".join(self.parts) or "."

    def close(self) -> None:
        os.close(self.dir_fd)


def check_path_argument(raw: str, argument: str = "path") -> None:
    """Refuse what no file system takes, with a message naming the argument."""
    if not isinstance(raw, str):
        raise ConfinementError(f"'{argument}' must be a string")
    if "\0" in raw:
        raise ConfinementError(f"'{argument}' contains a NUL byte; refused")
    if len(raw.encode("utf-8", "surrogateescape")) > _PATH_MAX:
        raise ConfinementError(f"'{argument}' is longer than the system's path limit ({_PATH_MAX})")
    for part in raw.split("/"):
        if len(part.encode("utf-8", "surrogateescape")) > _NAME_MAX:
            raise ConfinementError(
                f"'{argument}' has a component longer than the system's name limit ({_NAME_MAX})"
            )


class Workspace:
    """A workspace root held open by a directory descriptor."""

    def __init__(self, root: Path) -> None:
        self.root = Path(os.path.realpath(root))
        self.fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # ------------------------------------------------------------ resolution
    def components(self, raw: str, argument: str = "path") -> list[str]:
        """``raw`` as components from the root: relative paths start at the root,
        absolute ones must lie under it (``~`` is not expanded: it is a name)."""
        check_path_argument(raw, argument)
        if raw.startswith("/"):
            root = str(self.root)
            norm = os.path.normpath(raw)
            if norm != root and not norm.startswith(root.rstrip("/") + "/"):
                raise ConfinementError(f"{raw!r} is outside the workspace {self.root}; refused")
            raw = norm[len(root) :]
        return [p for p in raw.split("/") if p not in ("", ".")]

    def target(
        self,
        raw: str,
        *,
        argument: str = "path",
        follow_last: bool = True,
        create_dirs: bool = False,
    ) -> Target:
        """Resolve ``raw`` to its parent directory descriptor and last name.

        Symlinks inside the workspace are followed (the last one too when
        ``follow_last``); any that leads out raises ConfinementError. Missing
        parents are created (without following anything) when ``create_dirs``."""
        pending = self.components(raw, argument)
        for _ in range(RETRIES):
            try:
                return self._walk(raw, list(pending), follow_last, create_dirs)
            except Changed:
                continue
        raise ConfinementError(f"{raw!r} kept changing while it was being opened; refused")

    def _walk(self, raw: str, pending: list[str], follow_last: bool, create_dirs: bool) -> Target:
        fds = [os.dup(self.fd)]
        names: list[str] = []
        links = 0
        pending.reverse()  # a stack: the next component is last
        try:
            while pending:
                part = pending.pop()
                last = not pending
                if part in ("", "."):
                    continue
                if part == "..":
                    if not names:
                        raise ConfinementError(
                            f"{raw!r} is outside the workspace {self.root}; refused"
                        )
                    names.pop()
                    os.close(fds.pop())
                    continue
                try:
                    st = os.stat(part, dir_fd=fds[-1], follow_symlinks=False)
                except FileNotFoundError:
                    if last:
                        return self._done(fds, names, part)
                    if not create_dirs:
                        raise
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, dir_fd=fds[-1])
                    pending.append(part)
                    continue
                if stat.S_ISLNK(st.st_mode):
                    if last and not follow_last:
                        return self._done(fds, names, part)
                    links += 1
                    if links > MAX_SYMLINKS:
                        raise ConfinementError(f"{raw!r}: too many levels of symbolic links")
                    target = os.readlink(part, dir_fd=fds[-1])
                    if target.startswith("/"):
                        inside = self._inside(target)
                        if inside is None:
                            raise ConfinementError(
                                f"{raw!r} is a symbolic link leading outside the workspace "
                                f"{self.root}; refused"
                            )
                        while len(fds) > 1:  # restart from the root
                            os.close(fds.pop())
                        names.clear()
                        pending.extend(reversed(inside))
                    else:
                        pending.extend(reversed([p for p in target.split("/") if p]))
                    continue
                if last:
                    return self._done(fds, names, part)
                if not stat.S_ISDIR(st.st_mode):
                    raise NotADirectoryError(errno.ENOTDIR, "not a directory", "/".join(names))
                try:
                    fd = os.open(part, _DIR_FLAGS, dir_fd=fds[-1])
                except OSError as error:
                    if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):
                        raise Changed from None
                    raise
                if os.fstat(fd).st_ino != st.st_ino:
                    os.close(fd)
                    raise Changed
                fds.append(fd)
                names.append(part)
            return self._done(fds, names, "")
        except BaseException:
            for fd in fds:
                os.close(fd)
            raise

    @staticmethod
    def _done(fds: list[int], names: list[str], name: str) -> Target:
        keep = fds.pop()
        for fd in fds:
            os.close(fd)
        fds.clear()  # nothing left for the walk's error path to close
        parts = (*names, name) if name else tuple(names)
        return Target(keep, name, parts)

    def _inside(self, absolute: str) -> list[str] | None:
        norm = os.path.normpath(absolute)
        root = str(self.root)
        if norm == root:
            return []
        if norm.startswith(root.rstrip("/") + "/"):
            return [p for p in norm[len(root) :].split("/") if p]
        return None

    # ------------------------------------------------------------ opening
    def open_file(self, raw: str, *, argument: str = "path") -> tuple[int, str]:
        """A read-only descriptor of the regular file ``raw`` and its real relative path.

        A file with more than one hard link is refused: another of its names may
        lie outside the workspace, and nothing here can tell."""
        for _ in range(RETRIES):
            target = self.target(raw, argument=argument)
            try:
                if not target.name:
                    raise IsADirectoryError(errno.EISDIR, "is a directory", target.rel)
                try:
                    fd = os.open(
                        target.name,
                        os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK,
                        dir_fd=target.dir_fd,
                    )
                except OSError as error:
                    if error.errno == errno.ELOOP:  # became a symlink: resolve again
                        continue
                    raise
            finally:
                target.close()
            _check_regular(fd, target.rel)
            return fd, target.rel
        raise ConfinementError(f"{raw!r} kept changing while it was being opened; refused")

    def open_dir(self, raw: str, *, argument: str = "path") -> tuple[int, str]:
        """A descriptor of the directory ``raw`` and its real relative path."""
        for _ in range(RETRIES):
            target = self.target(raw, argument=argument)
            try:
                if not target.name:
                    return os.dup(target.dir_fd), target.rel
                try:
                    fd = os.open(target.name, _DIR_FLAGS, dir_fd=target.dir_fd)
                except OSError as error:
                    if error.errno == errno.ELOOP:
                        continue
                    raise
            finally:
                target.close()
            return fd, target.rel
        raise ConfinementError(f"{raw!r} kept changing while it was being opened; refused")

    def link_inside(self, dir_fd: int, name: str, rel_dir: str) -> bool:
        """Whether the symlink ``name`` in ``rel_dir`` resolves inside the workspace."""
        rel = f"{rel_dir}/{name}" if rel_dir not in ("", ".") else name
        try:
            self.target(rel).close()
        except ConfinementError:
            return False
        except OSError:
            return True  # dangling or unreadable, but not leading out
        return True


class DirCursor:
    """Regular files of a workspace opened one after another, each directory on
    the way opened once while the files go in path order (``path_order``): the
    directories of the current file's path are held open, one descriptor each,
    and the next file's directories are opened from the deepest one it shares.

    Each directory is opened by name relative to its parent's descriptor with
    ``O_DIRECTORY | O_NOFOLLOW`` and each file with ``O_NOFOLLOW`` (then the
    regular, singly linked check of ``open_file``), so no symlink is followed by
    the kernel and a directory held open is the one that was there, never
    whatever a swapped-in symlink leads to. A component that is a symlink (or
    a path that is not plain: ``..``, ``.``, empty parts, NUL, very long names)
    is left to ``Workspace.open_file``'s walk from the root, which follows links
    that stay inside and refuses the rest: the same answers as ``open_file``,
    without a walk from the root per file. At most one descriptor per level of
    the current path is held (as a walk holds); ``close`` releases them."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self._names: list[str] = []  # the directories held open, from the root
        self._fds: list[int] = []  # ... their descriptors

    def open_file(self, rel: str) -> int:
        """A read-only descriptor of the regular file ``rel`` (``open_file``'s checks)."""
        parts = rel.split("/")
        if not _plain(rel, parts):
            return self.workspace.open_file(rel)[0]
        dirs = parts[:-1]
        names = self._names
        keep = 0
        for held, part in zip(names, dirs, strict=False):
            if held != part:
                break
            keep += 1
        self._drop(keep)
        for part in dirs[keep:]:
            try:
                fd = os.open(part, _DIR_FLAGS, dir_fd=self._dir_fd())
            except OSError as error:
                if error.errno in (errno.ELOOP, errno.ENOTDIR):  # a symlink, or not a directory
                    return self.workspace.open_file(rel)[0]
                raise
            self._fds.append(fd)
            names.append(part)
        try:
            return open_entry(self._dir_fd(), parts[-1], rel)
        except OSError as error:
            if error.errno == errno.ELOOP:  # the file is a symlink: resolved from the root
                return self.workspace.open_file(rel)[0]
            raise

    def _dir_fd(self) -> int:
        return self._fds[-1] if self._fds else self.workspace.fd

    def _drop(self, keep: int) -> None:
        while len(self._fds) > keep:
            os.close(self._fds.pop())
            self._names.pop()

    def close(self) -> None:
        self._drop(0)

    def __enter__(self) -> DirCursor:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


_PLAIN_PART_CHARS = _NAME_MAX // 4  # a part this long fits the name limit in any UTF-8
_PLAIN_PATH_CHARS = _PATH_MAX // 4


def _plain(rel: str, parts: list[str]) -> bool:
    """A relative path of ordinary names that fits the system's limits."""
    return (
        len(rel) <= _PLAIN_PATH_CHARS
        and "\0" not in rel
        and all(part not in ("", ".", "..") and len(part) <= _PLAIN_PART_CHARS for part in parts)
    )


def path_order(rel: str) -> list[str]:
    """Sort key that keeps each directory's files and subdirectories together
    (by components: ``a/b/c`` sorts beside ``a/b/d``, not after ``a/b-c/d``)."""
    return rel.split("/")


def open_entry(dir_fd: int, name: str, rel: str) -> int:
    """A read-only descriptor of the regular, singly linked file ``name`` in
    ``dir_fd`` (never through a symlink: ``ELOOP`` if it became one)."""
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=dir_fd)
    _check_regular(fd, rel)
    return fd


def _check_regular(fd: int, rel: str) -> None:
    st = os.fstat(fd)
    problem = ""
    if stat.S_ISDIR(st.st_mode):
        problem = f"{rel} is a directory"
    elif not stat.S_ISREG(st.st_mode):
        problem = f"{rel} is not a regular file; refused"
    elif st.st_nlink > 1:
        problem = (
            f"{rel} has {st.st_nlink} hard links; bonsai reads only singly linked files "
            "(another link may lie outside the workspace)"
        )
    if problem:
        os.close(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, problem)
        raise ConfinementError(problem)


def read_fd(fd: int, limit: int | None = None) -> bytes:
    """The bytes behind ``fd`` (at most ``limit``); closes it."""
    with os.fdopen(fd, "rb", closefd=True) as handle:
        return handle.read() if limit is None else handle.read(limit)


@contextlib.contextmanager
def opened(root: Path) -> Iterator[Workspace]:
    workspace = Workspace(root)
    try:
        yield workspace
    finally:
        workspace.close()
