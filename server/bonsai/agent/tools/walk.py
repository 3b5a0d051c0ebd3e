"""Walking the workspace for glob and grep without ever following a symlink out.

Directories are opened through the confined resolver, entries are classified
with ``lstat`` relative to their directory's descriptor, and files are opened
with ``O_NOFOLLOW`` from that same descriptor. A symlink that leads outside is
recorded as skipped (the tools say so); one that stays inside is reported under
its own name (a linked file is searched, a linked directory is not descended,
so a loop of links cannot make the walk endless).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field

import regex

from bonsai.services.fs.confined import ConfinementError, Workspace

SKIP_DIRS = {".git", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache", ".tox"}


@dataclass(frozen=True)
class Entry:
    rel: str  # from the workspace root
    dir_fd: int  # open while the walk is at this entry
    name: str
    is_dir: bool
    is_link: bool  # a symlink that stays inside the workspace


@dataclass
class Walk:
    skipped: list[str] = field(default_factory=list)  # symlinks leading out, not followed

    def note(self) -> str:
        if not self.skipped:
            return ""
        shown = ", ".join(self.skipped[:5]) + (" …" if len(self.skipped) > 5 else "")
        return (
            f"\n[skipped {len(self.skipped)} symbolic link(s) leading outside the workspace: "
            f"{shown}]"
        )


def entries(ws: Workspace, base: str, walk: Walk, max_depth: int | None = None) -> Iterator[Entry]:
    """Every entry under the directory ``base`` (workspace-relative), depth first,
    sorted by name; ``max_depth`` 1 is ``base``'s own entries."""
    pending: list[tuple[str, int]] = [(base, 1)]
    while pending:
        rel_dir, depth = pending.pop()
        try:
            fd, real = ws.open_dir(rel_dir)
        except ConfinementError:
            walk.skipped.append(rel_dir)
            continue
        except OSError:
            continue
        try:
            subdirs: list[str] = []
            for entry in _scan(ws, fd, real, walk):
                yield entry
                if entry.is_dir and not entry.is_link and (max_depth is None or depth < max_depth):
                    subdirs.append(entry.rel)
            pending.extend((d, depth + 1) for d in reversed(subdirs))
        finally:
            os.close(fd)


def _scan(ws: Workspace, fd: int, rel_dir: str, walk: Walk) -> Iterator[Entry]:
    try:
        with os.scandir(fd) as it:
            names = sorted(e.name for e in it)
    except OSError:
        return
    for name in names:
        rel = name if rel_dir in ("", ".") else f"{rel_dir}/{name}"
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISLNK(st.st_mode):
            if not ws.link_inside(fd, name, rel_dir):
                walk.skipped.append(rel)
                continue
            try:
                is_dir = stat.S_ISDIR(os.stat(name, dir_fd=fd).st_mode)
            except OSError:
                continue  # dangling
            yield Entry(rel, fd, name, is_dir, True)
        elif stat.S_ISDIR(st.st_mode):
            if name not in SKIP_DIRS:
                yield Entry(rel, fd, name, True, False)
        elif stat.S_ISREG(st.st_mode):
            yield Entry(rel, fd, name, False, False)


# ---------------------------------------------------------------- glob patterns
class PatternError(ValueError):
    pass


@dataclass(frozen=True)
class Glob:
    """``regex`` is compiled by the ``regex`` module, not ``re``: ``*a*a*a*a*a*b``
    is ``[^/]*a[^/]*a…``, which ``re`` backtracks through for minutes over one long
    file name (505 s for 200 a's); ``regex`` answers at once, and a caller can
    give it a timeout."""

    regex: regex.Pattern[str]
    base: tuple[str, ...]  # leading components without wildcards
    depth: int | None  # components after the base (None: ``**`` reaches any depth)


def compile_glob(pattern: str, argument: str = "pattern") -> Glob:
    """A glob (``*``, ``?``, ``[...]``, ``**``) as a regex over workspace-relative
    paths. Absolute patterns and ``..`` components are refused: a glob names
    files inside the workspace only."""
    if "\0" in pattern:
        raise PatternError(f"'{argument}' contains a NUL byte; refused")
    if pattern.startswith(("/", "~")):
        raise PatternError(
            f"'{argument}' must be relative to the workspace root ({pattern!r} is absolute); "
            "refused"
        )
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise PatternError(f"'{argument}' climbs out of the workspace with '..'; refused")
    if not parts:
        raise PatternError(f"'{argument}' names no file")
    base: list[str] = []
    for part in parts:
        if any(c in part for c in "*?["):
            break
        base.append(part)
    rest = parts[len(base) :]
    depth = None if "**" in rest else len(rest)
    body = "/".join(_part_regex(p) for p in parts)
    body = body.replace("(?:.*/)?/", "(?:.*/)?")
    return Glob(regex.compile(body + r"\Z", regex.S), tuple(base), depth)


def _part_regex(part: str) -> str:
    if part == "**":
        return "(?:.*/)?"
    out: list[str] = []
    i = 0
    while i < len(part):
        c = part[i]
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = part.find("]", i + 2 if part[i + 1 : i + 2] in ("!", "]") else i + 1)
            if end < 0:
                out.append(re.escape(c))
            else:
                inner = part[i + 1 : end]
                if inner.startswith("!"):
                    inner = "^" + inner[1:]
                out.append("[" + inner.replace("\\", "\\\\").replace("/", "") + "]")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)
