"""``bonsai doctor``: check the home (modes, lock, integrity, the commit record, backups).

``--restore [BACKUP]`` puts a backup back and ``--accept-loss`` carries on with
what the database still holds; both ask first (``--yes`` skips the question),
need the daemon stopped, and keep the damaged files aside in
``damaged-<time>/``: nothing is ever deleted.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path

from bonsai.services.config import bonsai_home
from bonsai.services.privacy import is_private
from bonsai.services.store import backup as backups
from bonsai.services.store.commit_record import CommitRecord, record_path
from bonsai.services.store.db import DatabaseBusy, acquire_lock
from bonsai.services.store.health import DbHealth, inspect


@dataclass
class Findings:
    lines: list[tuple[str, str]] = field(default_factory=list)

    def ok(self, text: str) -> None:
        self.lines.append(("ok", text))

    def warn(self, text: str) -> None:
        self.lines.append(("warn", text))

    def fail(self, text: str) -> None:
        self.lines.append(("FAIL", text))

    @property
    def failed(self) -> bool:
        return any(level == "FAIL" for level, _ in self.lines)

    def print(self) -> None:
        for level, text in self.lines:
            print(f"{level:>4}  {text}")


def _lock_holder(db_path: Path) -> str | None:
    """The pid holding the database lock, or None (checked without taking it for long)."""
    lock_path = db_path.with_name(db_path.name + ".lock")
    try:
        fd = os.open(lock_path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            with open(lock_path, encoding="utf-8") as handle:
                return handle.read().strip() or "unknown"
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _check_modes(home: Path, found: Findings) -> None:
    info = os.lstat(home)
    if info.st_uid != os.getuid():
        found.fail(f"{home} belongs to uid {info.st_uid}, not to you (uid {os.getuid()})")
    open_paths = []
    for root, dirs, files in os.walk(home):
        for name in [*dirs, *files]:
            path = Path(root) / name
            with contextlib.suppress(FileNotFoundError):
                mode = os.lstat(path).st_mode
                if not stat.S_ISLNK(mode) and not is_private(mode):
                    open_paths.append(f"{path.relative_to(home)} ({stat.S_IMODE(mode):o})")
    home_mode = stat.S_IMODE(info.st_mode)
    if not is_private(info.st_mode):
        open_paths.insert(0, f". ({home_mode:o})")
    if open_paths:
        shown = ", ".join(open_paths[:5]) + (" …" if len(open_paths) > 5 else "")
        found.warn(
            f"readable by other users: {shown}; the daemon tightens these when it starts "
            f"(or: chmod -R go-rwx {home})"
        )
    else:
        found.ok(f"{home} is private (mode {home_mode:o}; files only you can read)")


def _check_database(db_path: Path, found: Findings) -> DbHealth:
    health = inspect(db_path)
    if health.db_size is None:
        found.warn(f"{db_path} does not exist ({health.files()})")
    elif health.check == "ok":
        found.ok(f"{db_path}: integrity check ok, {health.messages} messages ({health.files()})")
    else:
        found.fail(f"{db_path}: integrity check failed: {health.check} ({health.files()})")
    if health.record_problem:
        found.fail(health.record_problem)
    elif health.record is None:
        found.warn(f"{record_path(db_path)} is missing: no record of what was committed yet")
    elif health.lost:
        found.fail(
            f"{health.record.messages} messages were acknowledged but the database holds "
            f"{health.messages or 0}: {health.lost} are missing"
        )
    else:
        held = health.messages or 0
        found.ok(f"commit record: {health.record.messages} acknowledged, {held} present")
    return health


def _check_backups(db_path: Path, found: Findings) -> list[backups.Backup]:
    listed = backups.list_backups(db_path)
    if not listed:
        found.warn(f"no backups in {backups.backup_dir(db_path)} yet")
        return []
    good = []
    for item in listed:
        verdict = backups.check_backup(item.path)
        if verdict == "ok":
            good.append(item)
            found.ok(f"backup {item.path.name}: {item.when()}, {item.messages} messages, intact")
        else:
            found.fail(f"backup {item.path.name} is damaged: {verdict}")
    return good


def _confirm(question: str, assume_yes: bool) -> bool:
    if assume_yes:
        return True
    if not sys.stdin.isatty():
        print(f"{question} — not asked (no terminal); pass --yes to proceed", file=sys.stderr)
        return False
    return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")


def _pick(db_path: Path, good: list[backups.Backup], name: str | None) -> backups.Backup | None:
    if name is None:
        return good[0] if good else None
    wanted = Path(name)
    for item in backups.list_backups(db_path):
        if item.path.name == wanted.name or item.path == wanted.resolve():
            return item if item in good else None
    return None


def _restore(
    db_path: Path, health: DbHealth, good: list[backups.Backup], args: argparse.Namespace
) -> int:
    chosen = _pick(db_path, good, args.restore if args.restore != "newest" else None)
    if chosen is None:
        which = (
            "an intact backup" if args.restore == "newest" else f"an intact backup {args.restore!r}"
        )
        print(f"bonsai doctor: there is no {which} to restore", file=sys.stderr)
        return 1
    acknowledged = health.record.messages if health.record else None
    loss = ""
    if acknowledged is not None and acknowledged > chosen.messages:
        loss = (
            f"; {acknowledged - chosen.messages} acknowledged messages newer than it are not in it"
        )
    print(
        f"restore {chosen.path.name} ({chosen.when()}, {chosen.messages} messages) over {db_path}"
        f"{loss}. The current files move to {db_path.parent}/damaged-<time>/."
    )
    if not _confirm("Restore this backup?", args.yes):
        return 1
    with _stopped(db_path) as ok:
        if not ok:
            return 1
        aside = backups.restore(db_path, chosen, [record_path(db_path)])
        CommitRecord(record_path(db_path), chosen.messages).close()
    print(f"restored {chosen.messages} messages; the damaged files are in {aside}")
    return 0


def _accept(db_path: Path, health: DbHealth, args: argparse.Namespace) -> int:
    if health.check != "ok":
        print(
            f"bonsai doctor: {db_path} fails its integrity check; restore a backup "
            "(--restore) or salvage it with `sqlite3 FILE .recover`",
            file=sys.stderr,
        )
        return 1
    held = health.messages or 0
    print(f"carry on with the {held} messages {db_path} holds now; a copy of the files goes aside.")
    if not _confirm("Accept the loss?", args.yes):
        return 1
    with _stopped(db_path) as ok:
        if not ok:
            return 1
        aside = backups.set_aside(db_path, [record_path(db_path)], copy=True)
        CommitRecord(record_path(db_path), held).close()
    print(f"the record now says {held} messages; copies of the old files are in {aside}")
    return 0


@contextlib.contextmanager
def _stopped(db_path: Path):  # type: ignore[no-untyped-def]
    try:
        lock = acquire_lock(db_path)
    except DatabaseBusy as error:
        print(f"bonsai doctor: {error}; stop it first (`bonsai stop`)", file=sys.stderr)
        yield False
        return
    try:
        yield True
    finally:
        lock.release()


def run_doctor(args: argparse.Namespace) -> int:
    home = bonsai_home()
    db_path = home / "bonsai.db"
    if not home.exists():
        print(f"{home} does not exist yet: nothing to check (the daemon creates it)")
        return 0
    found = Findings()
    _check_modes(home, found)
    holder = _lock_holder(db_path)
    if holder:
        found.ok(f"a daemon (pid {holder}) holds {db_path}")
    else:
        found.ok("no daemon holds the database")
    health = _check_database(db_path, found)
    good = _check_backups(db_path, found)
    found.print()
    if args.restore:
        return _restore(db_path, health, good, args)
    if args.accept_loss:
        return _accept(db_path, health, args)
    if found.failed:
        hint = "`bonsai doctor --restore`" if good else "`bonsai doctor --accept-loss`"
        print(f"problems found; to repair: {hint} (the damaged files are kept aside)")
        return 1
    print("all good")
    return 0


def add_doctor_command(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    doctor = sub.add_parser(
        "doctor", help="check the home, the database and its backups (--restore a backup)"
    )
    group = doctor.add_mutually_exclusive_group()
    group.add_argument(
        "--restore",
        nargs="?",
        const="newest",
        metavar="BACKUP",
        help="restore a backup (the newest intact one by default)",
    )
    group.add_argument(
        "--accept-loss",
        action="store_true",
        help="carry on with what the database holds now (a copy is kept aside)",
    )
    doctor.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    doctor.set_defaults(func=run_doctor)
