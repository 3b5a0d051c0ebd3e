"""Failures caused by the environment, told in one line: the path, the cause, the fix.

Permissions, read-only files and file systems, a full disk, a missing
directory: each becomes :class:`EnvironmentProblem` whose message a user can
act on. The traceback belongs in the log, never on the user's screen.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import apsw


class EnvironmentProblem(Exception):
    """Something outside bonsai stops it (the message names the path, the cause, the fix)."""


_FULL = (errno.ENOSPC, errno.EDQUOT)
_database: Path | None = None


def remember_database(db_path: Path) -> None:
    """The daemon's database, named by runtime errors that SQLite reports without a path."""
    global _database
    _database = db_path


def runtime_problem(error: BaseException) -> str | None:
    """One line for an environment failure while serving (a full disk, a read-only file)."""
    if isinstance(error, apsw.Error) and _database is not None:
        return describe_sqlite_error(error, _database)
    if isinstance(error, OSError) and error.errno in (*_FULL, errno.EROFS):
        return describe_os_error(error)
    return None


def describe_os_error(error: OSError, fallback: Path | None = None) -> str:
    path = error.filename or fallback or "?"
    cause = error.strerror or type(error).__name__
    code = error.errno
    if code in (errno.EACCES, errno.EPERM):
        return (
            f"{path}: permission denied. Fix: make it yours and writable "
            f"(chmod u+rwX {_owner_hint(Path(str(path)))}), or set BONSAI_HOME to a directory "
            "you own"
        )
    if code == errno.EROFS:
        return f"{path}: the file system is read-only. Fix: set BONSAI_HOME to a writable place"
    if code in _FULL:
        return (
            f"{path}: no space left on the device. Fix: free some space and retry; "
            "everything acknowledged so far is kept"
        )
    if code == errno.ENOENT:
        return f"{path}: does not exist ({cause}). Fix: create it or correct the path"
    if code == errno.ENOTDIR:
        return f"{path}: a part of this path is a file, not a directory. Fix: correct the path"
    return f"{path}: {cause}"


def _owner_hint(path: Path) -> Path:
    """The nearest existing ancestor: what the user can actually fix."""
    while not os.path.lexists(path) and path.parent != path:
        path = path.parent
    return path


def describe_sqlite_error(error: apsw.Error, db_path: Path) -> str | None:
    """A one-line description of a SQLite error the environment caused, or None."""
    files = f"{db_path} {db_path}-wal {db_path}-shm"
    if isinstance(error, apsw.ReadOnlyError):
        return (
            f"{db_path}: the database is read-only ({error}). Fix: make it and its directory "
            f"writable (chmod u+w {files}; chmod u+rwx {db_path.parent})"
        )
    if isinstance(error, apsw.FullError):
        return (
            f"{db_path}: the disk is full. Fix: free some space and retry; "
            "everything acknowledged so far is kept"
        )
    if isinstance(error, apsw.CantOpenError):
        return (
            f"{db_path}: cannot open the database ({error}). Fix: check that it and "
            f"{db_path.parent} exist and are yours and writable"
        )
    if isinstance(error, apsw.IOError):
        return (
            f"{db_path}: the disk refused a write or read ({error}); it may be full or failing. "
            "Fix: free some space or check the disk; everything acknowledged so far is kept"
        )
    if isinstance(error, apsw.PermissionsError | apsw.AuthError):
        return f"{db_path}: access denied ({error}). Fix: check the file's owner and mode"
    if isinstance(error, apsw.BusyError):
        return f"{db_path}: another program holds the database ({error}). Fix: close it"
    return None


def environment_problem(error: BaseException, db_path: Path) -> EnvironmentProblem | None:
    """Map ``error`` to an :class:`EnvironmentProblem` when the environment caused it."""
    if isinstance(error, OSError):
        return EnvironmentProblem(describe_os_error(error, db_path.parent))
    if isinstance(error, apsw.Error):
        text = describe_sqlite_error(error, db_path)
        return EnvironmentProblem(text) if text else None
    return None
