"""Git facts for the project context: root, branch, status, and the session baseline.

``git`` runs as a subprocess with a timeout; a workspace outside git, a missing
``git`` binary or a timeout give a clear one-line note instead of an error.
The baseline taken at session start records which paths were already changed
(and their content hash), so the volatile tail can tell pre-existing work
apart from this session's changes.

The workspace may be hostile, and its ``.git/config`` with it: ``git status``
would run a ``core.fsmonitor`` hook or a clean filter driver it names. Every
call overrides those on the command line (which wins over every config file),
status does not recurse into submodules (each has its own config), and the
work tree is the workspace whatever ``core.worktree`` says. The
drivers to override are learned from one ``git config`` call, reused while the
bytes of every config file (and of every place one could appear) are unchanged. Working
tree entries are hashed without following a symlink or reading a FIFO or a
device (``services/fs/untrusted.py``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from bonsai.services.fs.untrusted import entry_hash, entry_stat, regular_bytes
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
    (reading config runs nothing; an empty command means no filter).

    What ``git config`` reported is reused while every config file it read (and
    every place one could appear) holds the same bytes (``config_identity``)."""
    learned = _learned.get(cwd)
    if learned is not None and learned.still_true():
        return list(learned.overrides)
    files = {*config_candidates(cwd), *(learned.files if learned else ())}
    before = config_identity(tuple(sorted(files)))
    done = _git(cwd, ["git", *NEUTRAL, "config", "-z", "--show-origin", "--list"])
    read = parse_config_list(cwd, done.stdout) if done.returncode == 0 else None
    drivers = read.drivers if read is not None else _drivers_only(cwd)
    out: list[str] = []
    for driver in sorted(drivers):
        for key, value in (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false")):
            out += ["-c", f"filter.{driver}.{key}={value}"]
    # reusable only when every file git read was looked at before it ran (else next time)
    sure = read is not None and before is not None and read.origins <= files
    seen = tuple(sorted(files | (read.origins if read is not None else set())))
    _learned.pop(cwd, None)
    while len(_learned) >= _MAX_LEARNED:
        _learned.pop(next(iter(_learned)))
    _learned[cwd] = _Learned(seen, before if sure else None, tuple(out))
    return out


def _drivers_only(cwd: Path) -> set[str]:
    """The drivers from the filter keys alone (when the full listing failed)."""
    done = _git(cwd, ["git", *NEUTRAL, "config", "-z", "--name-only", "--get-regexp", r"^filter\."])
    return {d for key in done.stdout.split(b"\0") if (d := _driver(key)) is not None}


def _driver(key: bytes) -> str | None:
    name = key.decode("utf-8", "surrogateescape")
    if name.startswith("filter.") and name.count(".") >= 2:
        return name[len("filter.") : name.rindex(".")]
    return None


@dataclass(frozen=True)
class ConfigRead:
    drivers: set[str]
    origins: set[Path]  # the files git read an entry from


def parse_config_list(cwd: Path, out: bytes) -> ConfigRead | None:
    """``git config -z --show-origin --list``: origin, NUL, key[LF value], NUL, ...
    None when an entry comes from anything but a file or the command line."""
    fields = out.split(b"\0")
    if fields[-1] != b"" or len(fields) % 2 != 1:
        return None
    drivers: set[str] = set()
    origins: set[Path] = set()
    for origin, entry in zip(fields[0:-1:2], fields[1::2], strict=True):
        if origin.startswith(b"file:"):
            origins.add(cwd / os.fsdecode(origin[len(b"file:") :]))
        elif origin != b"command line:":
            return None
        if (driver := _driver(entry.split(b"\n", 1)[0])) is not None:
            drivers.add(driver)
    return ConfigRead(drivers, origins)


@dataclass(frozen=True)
class _Learned:
    files: tuple[Path, ...]
    identity: tuple[object, ...] | None  # None: not reusable, ask git again
    overrides: tuple[str, ...]

    def still_true(self) -> bool:
        return self.identity is not None and config_identity(self.files) == self.identity


_MAX_LEARNED = 64
_MAX_CONFIG_BYTES = 1 << 20
_learned: dict[Path, _Learned] = {}


def config_candidates(cwd: Path) -> list[Path]:
    """Every file git reads config from by default, whether it exists yet or not
    (``.git`` itself: a worktree's or submodule's ``.git`` file names its gitdir)."""
    found = [cwd / ".git", cwd / ".git" / "config", cwd / ".git" / "config.worktree"]
    found.append(Path("/etc/gitconfig"))
    home = os.environ.get("HOME")
    if home:
        found.append(Path(home) / ".gitconfig")
    xdg = os.environ.get("XDG_CONFIG_HOME") or (f"{home}/.config" if home else None)
    if xdg:
        found.append(Path(xdg) / "git" / "config")
    return found


def config_identity(files: tuple[Path, ...]) -> tuple[object, ...] | None:
    """The environment git reads config names from and the bytes of each file
    (None: absent or not a regular file). None overall when unsure: a file too
    large to read cheaply, or one that includes others (their names depend on
    conditions, so any of them could appear or change unseen)."""
    env = sorted((k, v) for k, v in os.environ.items() if k.startswith("GIT_"))
    parts: list[object] = [tuple(env), os.environ.get("HOME"), os.environ.get("XDG_CONFIG_HOME")]
    for path in files:
        data = None
        with contextlib.suppress(OSError):
            st = os.stat(path)
            if stat.S_ISREG(st.st_mode) and st.st_size > _MAX_CONFIG_BYTES:
                return None
            data = regular_bytes(path) if stat.S_ISREG(st.st_mode) else None
        if data is not None and b"include" in data.lower():
            return None
        parts.append((path, None if data is None else hashlib.blake2b(data).digest()))
    return tuple(parts)


_MAX_GIT_FILE_BYTES = 4096


def check_git_dir(root: Path) -> None:
    """Refuse a ``.git`` entry that makes git read another repository: a ``.git``
    file or link naming a git directory outside ``root`` would show the model that
    repository's branch, commits and tracked paths. Kept: a git directory under
    ``root``; a worktree's, whose ``gitdir`` file links back to this ``.git``
    (only the user's ``git worktree add`` writes it there); a submodule's, under
    ``.git/modules/`` of a repository that contains ``root``."""
    entry = root / ".git"
    if entry.is_dir() and not entry.is_symlink():
        return
    if entry.is_symlink():
        target = entry.resolve()
        if not target.is_relative_to(root.resolve()):
            raise GitError(f"{entry} is a link to a git directory outside the workspace ({target})")
        return
    data = regular_bytes(entry)
    if data is None or len(data) > _MAX_GIT_FILE_BYTES or not data.startswith(b"gitdir:"):
        raise GitError(f"{entry} is neither a git directory nor a 'gitdir:' file")
    named = os.fsdecode(data[len(b"gitdir:") :].split(b"\n", 1)[0].strip())
    gitdir = (root / named).resolve()
    here = root.resolve()
    if gitdir.is_relative_to(here) or _links_back(gitdir, entry) or _submodule_of(gitdir, here):
        return
    raise GitError(f"{entry} names a git directory outside the workspace ({gitdir})")


def _links_back(gitdir: Path, entry: Path) -> bool:
    back = regular_bytes(gitdir / "gitdir")
    if back is None or len(back) > _MAX_GIT_FILE_BYTES:
        return False
    named = Path(os.fsdecode(back.strip()))
    return (gitdir / named).resolve() == entry.resolve()


def _submodule_of(gitdir: Path, root: Path) -> bool:
    parts = gitdir.parts
    for i in range(len(parts) - 1):
        if parts[i : i + 2] == (".git", "modules"):
            owner = Path(*parts[:i])
            return root.is_relative_to(owner) and (owner / ".git").is_dir()
    return False


def run_git(cwd: Path, *args: str) -> str:
    """``git args`` in the repository at ``cwd``, whose work tree is ``cwd`` itself
    (a planted ``core.worktree`` would point status at the user's home or ``/``),
    and whose git directory is its own (``check_git_dir``)."""
    check_git_dir(cwd)
    try:
        done = _git(cwd, ["git", *NEUTRAL, f"--work-tree={cwd}", *filter_overrides(cwd), *args])
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
