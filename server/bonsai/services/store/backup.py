"""Rolling online backups of ``bonsai.db`` through SQLite's backup API.

A backup reads the database through its own read-only connection (WAL mode:
the daemon's writes never wait for it) into a temporary file that is
fsynced and renamed into ``backups/``, so a backup is whole or absent. The
newest ``keep`` copies are kept. :func:`restore` puts one back after moving
the damaged files aside: nothing is ever deleted.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import apsw

_NAME = re.compile(r"^bonsai-(\d{8}T\d{6}\.\d{3})-(\d+)m\.db$")


@dataclass(frozen=True)
class Backup:
    path: Path
    taken: str  # UTC, sortable: 20261201T093000.123
    messages: int

    def when(self) -> str:
        t = self.taken
        return f"{t[0:4]}-{t[4:6]}-{t[6:8]} {t[9:11]}:{t[11:13]}:{t[13:15]} UTC"


def backup_dir(db_path: Path) -> Path:
    return db_path.parent / "backups"


def list_backups(db_path: Path) -> list[Backup]:
    """Complete backups, newest first."""
    try:
        names = os.listdir(backup_dir(db_path))
    except FileNotFoundError:
        return []
    out = []
    for name in names:
        match = _NAME.match(name)
        if match:
            out.append(Backup(backup_dir(db_path) / name, match[1], int(match[2])))
    return sorted(out, key=lambda b: b.taken, reverse=True)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def take_backup(db_path: Path, keep: int = 5) -> Backup:
    """Copy the live database (a consistent snapshot) into ``backups/``.

    Raises apsw.Error or OSError.
    """
    directory = backup_dir(db_path)
    directory.mkdir(mode=0o700, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + f".{int(time.time() * 1000) % 1000:03d}"
    # not services.fs.atomic (which writes bytes it holds): SQLite's backup API writes this
    # file page by page; it is fsync'ed and renamed into place the same way
    tmp = directory / f".partial-{stamp}-{os.getpid()}.db"
    source = apsw.Connection(str(db_path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        dest = apsw.Connection(str(tmp))
        try:
            with dest.backup("main", source, "main") as step:
                while not step.done:
                    step.step(-1)  # one read transaction: a consistent snapshot
            row = dest.execute("SELECT count(*) FROM messages").fetchone()
            messages = int(row[0]) if row else 0
            # a standalone file: no WAL beside it, so copying it is copying all of it
            dest.execute("PRAGMA journal_mode=DELETE")
        finally:
            dest.close()
    finally:
        source.close()
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    final = directory / f"bonsai-{stamp}-{messages}m.db"
    os.replace(tmp, final)
    _fsync_dir(directory)
    prune(db_path, keep)
    return Backup(final, stamp, messages)


def prune(db_path: Path, keep: int) -> list[Path]:
    removed = []
    for old in list_backups(db_path)[max(1, keep) :]:
        with contextlib.suppress(OSError):
            old.path.unlink()
            removed.append(old.path)
    for stray in backup_dir(db_path).glob(".partial-*"):
        with contextlib.suppress(OSError):
            if time.time() - stray.stat().st_mtime > 3600:
                stray.unlink()  # a backup interrupted by a crash long ago
    return removed


def check_backup(path: Path) -> str:
    """``ok`` or what is wrong with a backup file (read-only)."""
    try:
        conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
        try:
            rows = conn.execute("PRAGMA quick_check").fetchall()
            conn.execute("SELECT count(*) FROM messages").fetchone()
        finally:
            conn.close()
    except apsw.Error as error:
        return f"{type(error).__name__}: {error}"
    return "ok" if rows and rows[0][0] == "ok" else str(rows[0][0] if rows else "no answer")


def database_files(db_path: Path) -> list[Path]:
    """The database and the files SQLite keeps beside it, those that exist."""
    names = [db_path, Path(f"{db_path}-wal"), Path(f"{db_path}-shm"), Path(f"{db_path}-journal")]
    return [p for p in names if os.path.lexists(p)]


def set_aside(db_path: Path, extra: list[Path], copy: bool = False) -> Path:
    """Move (or copy) the database files and ``extra`` into ``damaged-<time>/``; returns it."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    target = db_path.parent / f"damaged-{stamp}"
    n = 1
    while target.exists():
        n += 1
        target = db_path.parent / f"damaged-{stamp}-{n}"
    target.mkdir(mode=0o700)
    for path in [*database_files(db_path), *[p for p in extra if p.exists()]]:
        if copy:
            shutil.copy2(path, target / path.name)
        else:
            os.replace(path, target / path.name)
    _fsync_dir(target)
    return target


def restore(db_path: Path, backup: Backup, extra: list[Path] | None = None) -> Path:
    """Put ``backup`` in place of the database; the old files (and ``extra``) go aside."""
    aside = set_aside(db_path, extra or [])
    tmp = db_path.with_name(f".{db_path.name}.restoring")
    shutil.copyfile(backup.path, tmp)
    os.chmod(tmp, 0o600)
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, db_path)
    _fsync_dir(db_path.parent)
    return aside
