"""Git facts for the project context: root, branch, status, and the session baseline.

``git`` runs as a subprocess with a timeout; a workspace outside git, a missing
``git`` binary or a timeout give a clear one-line note instead of an error.
The baseline taken at session start records which paths were already changed
(and their content hash), so the volatile tail can tell pre-existing work
apart from this session's changes.

The workspace may be hostile, and its ``.git/config`` with it: ``git status``
would run a ``core.fsmonitor`` hook or a clean filter driver it names. Every
call overrides those on the command line (which wins over every config file),
and status does not recurse into submodules (each has its own config). Working
tree entries are hashed without following a symlink or reading a FIFO or a
device (``services/fs/untrusted.py``).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from bonsai.services.fs.untrusted import entry_hash, entry_stat
from bonsai.services.privacy import user_umask

GIT_TIMEOUT_S = 5.0
MAX_BASELINE_FILES = 2_000


class GitError(RuntimeError):
    """git is missing, failed, or timed out (the message says which)."""


class GitBaseline(BaseModel):
    """The workspace's git state when the session started (JSON-serialisable)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    root: str | None = None
    branch: str | None = None
    head: str | None = None
    changes: dict[str, str] = Field(default_factory=dict)  # path -> content hash or "deleted"
    stats: dict[str, tuple[int, int]] = Field(default_factory=dict)  # path -> (mtime_ns, size)
    note: str = ""  # why git facts are missing or partial

    def unchanged(self, root: Path, path: str) -> bool:
        """True when ``path`` still holds the bytes it had at the baseline (a stat
        match is trusted; otherwise the content hash decides)."""
        if path not in self.changes:
            return False
        if self.stats.get(path) == file_stat(root / path):
            return True
        return self.changes[path] == file_hash(root / path)


# what a planted config could make `git status` run, switched off
NEUTRAL = ("-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null")


def _git(cwd: Path, argv: list[str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        argv,
        cwd=cwd,
        capture_output=True,
        timeout=GIT_TIMEOUT_S,
        check=False,
        umask=user_umask(),  # git may rewrite .git/index: as the user would, not 0600
    )


def filter_overrides(cwd: Path) -> list[str]:
    """``-c`` options emptying every filter driver the repository's config names
    (reading config runs nothing; an empty command means no filter)."""
    done = _git(cwd, ["git", *NEUTRAL, "config", "-z", "--name-only", "--get-regexp", r"^filter\."])
    drivers = set()
    for key in done.stdout.decode("utf-8", "surrogateescape").split("\0"):
        if key.startswith("filter.") and key.count(".") >= 2:
            drivers.add(key[len("filter.") : key.rindex(".")])
    out: list[str] = []
    for driver in sorted(drivers):
        for key, value in (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false")):
            out += ["-c", f"filter.{driver}.{key}={value}"]
    return out


def run_git(cwd: Path, *args: str) -> str:
    try:
        done = _git(cwd, ["git", *NEUTRAL, *filter_overrides(cwd), *args])
    except FileNotFoundError:
        raise GitError("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} timed out after {GIT_TIMEOUT_S:g}s") from None
    except OSError as exc:
        raise GitError(f"git could not run: {exc.strerror or exc}") from None
    if done.returncode != 0:
        raise GitError(done.stderr.decode("utf-8", "replace").strip() or f"git {args[0]} failed")
    return done.stdout.decode("utf-8", "surrogateescape")


def git_root(workspace: Path) -> Path | None:
    """The repository root containing ``workspace`` (the nearest directory with a
    ``.git`` entry), or None outside git. A filesystem walk: no subprocess."""
    for directory in (workspace, *workspace.parents):
        if (directory / ".git").exists():
            return directory
    return None


class GitStatus(BaseModel):
    model_config = ConfigDict(frozen=True)

    branch: str | None  # None before the first commit; "(detached)" on a detached HEAD
    head: str | None  # short commit id
    entries: list[tuple[str, str]]  # (two-letter status, path), sorted by path


def read_status(root: Path) -> GitStatus:
    """Branch, head and changed paths in one ``git status --porcelain=v2`` call."""
    out = run_git(
        root,
        "status",
        "--porcelain=v2",
        "-z",
        "--branch",
        "--untracked-files=all",
        "--ignore-submodules=all",
    )
    fields = out.split("\0")
    branch = head = None
    entries: list[tuple[str, str]] = []
    i = 0
    while i < len(fields):
        field = fields[i]
        i += 1
        if field.startswith("# branch.oid "):
            oid = field.removeprefix("# branch.oid ")
            head = None if oid == "(initial)" else oid[:7]
        elif field.startswith("# branch.head "):
            branch = field.removeprefix("# branch.head ")
        elif field[:2] in ("1 ", "u "):
            parts = field.split(" ", 8 if field[0] == "1" else 10)
            entries.append((parts[1].replace(".", " "), parts[-1]))
        elif field.startswith("2 "):
            parts = field.split(" ", 9)
            entries.append((parts[1].replace(".", " "), parts[-1]))
            i += 1  # the original path of a rename or copy follows
        elif field.startswith("? "):
            entries.append(("??", field[2:]))
    return GitStatus(branch=branch, head=head, entries=sorted(entries, key=lambda e: e[1]))


def file_stat(path: Path) -> tuple[int, int] | None:
    return entry_stat(path)


def file_hash(path: Path) -> str:
    """The entry's content hash (``"deleted"`` when gone): see ``entry_hash``."""
    return entry_hash(path)


def take_baseline(workspace: Path) -> GitBaseline:
    """The git state now, to tell this session's changes from earlier ones later."""
    root = git_root(workspace)
    if root is None:
        return GitBaseline(note="not a git repository")
    try:
        status = read_status(root)
    except GitError as exc:
        return GitBaseline(root=str(root), note=f"git status: {exc}")
    entries = status.entries
    note = ""
    if len(entries) > MAX_BASELINE_FILES:
        note = f"only the first {MAX_BASELINE_FILES:,} of {len(entries):,} changed paths recorded"
        entries = entries[:MAX_BASELINE_FILES]
    changes = {path: file_hash(root / path) for _, path in entries}
    stats = {path: st for _, path in entries if (st := file_stat(root / path)) is not None}
    return GitBaseline(
        root=str(root),
        branch=status.branch,
        head=status.head,
        changes=changes,
        stats=stats,
        note=note,
    )
