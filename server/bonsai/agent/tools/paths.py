"""The tools' side of confinement: ``services.fs.confined`` errors as tool failures.

Every file tool opens what it touches through :func:`workspace` (a descriptor of
the workspace root); nothing here builds a path string and opens it later."""

from __future__ import annotations

import contextlib
import errno
from collections.abc import Iterator
from pathlib import Path

from bonsai.agent.tools.base import ToolFailure
from bonsai.services.fs.confined import ConfinementError, Workspace, read_fd


@contextlib.contextmanager
def workspace(root: Path) -> Iterator[Workspace]:
    """The workspace held open; confinement and OS errors become ToolFailure."""
    try:
        ws = Workspace(root)
    except OSError as error:
        raise ToolFailure(f"the workspace {root} cannot be opened: {error.strerror}") from None
    try:
        yield ws
    except ConfinementError as error:
        raise ToolFailure(str(error)) from None
    except OSError as error:
        raise ToolFailure(describe(error)) from None
    finally:
        ws.close()


def describe(error: OSError) -> str:
    """A short, path-free account of an OS error for the model."""
    what = {
        errno.ENOENT: "no such file or directory",
        errno.ENOTDIR: "a component of the path is not a directory",
        errno.EISDIR: "is a directory",
        errno.ENAMETOOLONG: "the path is longer than the system allows",
        errno.EACCES: "permission denied",
        errno.ELOOP: "too many levels of symbolic links",
    }.get(error.errno or 0, error.strerror or str(error))
    name = error.filename if isinstance(error.filename, str) else ""
    return f"{name}: {what}" if name else what


def read_confined(root: Path, raw: str, limit: int | None = None) -> bytes:
    """The bytes of workspace file ``raw`` (at most ``limit``), read without ever
    following a symlink out. Raises ToolFailure."""
    with workspace(root) as ws:
        fd, _ = ws.open_file(raw)
        return read_fd(fd, limit)
