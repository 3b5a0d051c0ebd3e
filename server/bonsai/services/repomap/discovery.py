"""Find the files of a workspace that belong in the repository map.

Rules, in order: never descend into ``.git``, bonsai's own ``.bonsai`` or a
vendored/generated directory (``node_modules``, ``vendor``, ``.venv``, ``build``
...); honour every ``.gitignore`` on the way down (a deeper file overrides a
shallower one, the last matching pattern wins, as in git); skip files larger
than ``max_file_bytes``.
Binary files are recognised later, when the indexer reads them (NUL byte in the
first 8 KiB). The result is sorted by path, so discovery is deterministic.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # imported on first use: a parse worker needs only ``Candidate``
    import pathspec

DEFAULT_EXCLUDED_DIRS: frozenset[str] = frozenset(
    {
        ".bonsai",  # bonsai's own: memory entries, settings, rules (not the project's code)
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        "node_modules",
        "vendor",
        "third_party",
        "dist",
        "build",
        "target",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".idea",
    }
)
GITIGNORE = ".gitignore"


class Candidate(NamedTuple):
    """A file to index: workspace-relative POSIX path and its stat fingerprint."""

    path: str
    size: int
    mtime_ns: int


class Discovery(NamedTuple):
    files: list[Candidate]
    too_large: list[str]


class IgnoreRules:
    """Decides whether a workspace-relative path is excluded from the map."""

    def __init__(
        self,
        root: Path,
        excluded_dirs: Iterable[str] = DEFAULT_EXCLUDED_DIRS,
        max_file_bytes: int = 1_000_000,
    ) -> None:
        self.root = root
        self.excluded_dirs = frozenset(excluded_dirs) | {".git"}
        self.max_file_bytes = max_file_bytes
        self._specs: dict[str, pathspec.GitIgnoreSpec | None] = {}

    def reset(self) -> None:
        """Forget loaded ``.gitignore`` files (call after one changes)."""
        self._specs.clear()

    def spec_for(self, rel_dir: str) -> pathspec.GitIgnoreSpec | None:
        if rel_dir not in self._specs:
            path = self.root / rel_dir / GITIGNORE if rel_dir else self.root / GITIGNORE
            try:
                lines = path.read_text("utf-8", "replace").splitlines()
            except OSError:
                self._specs[rel_dir] = None
            else:
                import pathspec  # on first use: see the top (0.1-0.2 s of a worker's start)

                self._specs[rel_dir] = pathspec.GitIgnoreSpec.from_lines(lines)
        return self._specs[rel_dir]

    def gitignored(self, rel: str, is_dir: bool) -> bool:
        parts = rel.split("/")
        probe_suffix = "/" if is_dir else ""
        for depth in range(len(parts) - 1, -1, -1):  # deepest .gitignore first
            base = "/".join(parts[:depth])
            spec = self.spec_for(base)
            if spec is None:
                continue
            result = spec.check_file("/".join(parts[depth:]) + probe_suffix)
            if result.include is not None:
                return bool(result.include)
        return False

    def excluded(self, rel: str, is_dir: bool = False) -> bool:
        """True when ``rel`` or one of its parent directories is excluded."""
        parts = rel.split("/")
        for i in range(1, len(parts)):
            parent = "/".join(parts[:i])
            if parts[i - 1] in self.excluded_dirs or self.gitignored(parent, True):
                return True
        if is_dir and parts[-1] in self.excluded_dirs:
            return True
        return self.gitignored(rel, is_dir)


def _inside(root: Path, path: str) -> bool:
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip("/") + "/")


def _walk_dir(rules: IgnoreRules, rel_dir: str, out: Discovery) -> list[str]:
    """Scan one directory; append its files to ``out``, return subdirectories."""
    subdirs: list[str] = []
    abs_dir = rules.root / rel_dir if rel_dir else rules.root
    try:
        entries = sorted(os.scandir(abs_dir), key=lambda e: e.name)
    except OSError:
        return subdirs
    for entry in entries:
        rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
        try:
            if entry.is_symlink() and not _inside(rules.root, entry.path):
                continue  # a link leading out of the workspace is not part of its map
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in rules.excluded_dirs and not rules.gitignored(rel, True):
                    subdirs.append(rel)
                continue
            st = entry.stat()
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode) or rules.gitignored(rel, False):
            continue
        if st.st_size > rules.max_file_bytes:
            out.too_large.append(rel)
        else:
            out.files.append(Candidate(rel, st.st_size, st.st_mtime_ns))
    return subdirs


def discover(rules: IgnoreRules, under: str = "") -> Discovery:
    """All candidate files under ``rules.root`` (or its subdirectory ``under``),
    sorted by path."""
    out = Discovery([], [])
    if under and rules.excluded(under, is_dir=True):
        return out
    pending = [under]
    while pending:
        pending.extend(reversed(_walk_dir(rules, pending.pop(), out)))
    out.files.sort()
    out.too_large.sort()
    return out


def stat_candidate(rules: IgnoreRules, rel: str) -> Candidate | None:
    """The candidate for one path, or None if it is gone, excluded or too large."""
    if rules.excluded(rel):
        return None
    try:
        st = (rules.root / rel).stat()
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size > rules.max_file_bytes:
        return None
    return Candidate(rel, st.st_size, st.st_mtime_ns)
