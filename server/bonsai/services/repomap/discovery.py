"""Find the files of a workspace that belong in the repository map.

Rules, in order: never descend into ``.git``, bonsai's own ``.bonsai`` or a
vendored/generated directory (``node_modules``, ``vendor``, ``.venv``, ``build``
...); honour every ``.gitignore`` on the way down (a deeper file overrides a
shallower one, the last matching pattern wins, as in git); skip files larger
than ``max_file_bytes``. The walk passes each directory's chain of specs down
to its subdirectories, so every ``.gitignore`` is read once and an entry is
checked against the specs already known (``excluded()`` answers one path at a
time, the same way).
Binary files are recognised later, when the indexer reads them (NUL byte in the
first 8 KiB). The result is sorted by path, so discovery is deterministic.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from bonsai.services.fs.confined import ConfinementError, Workspace
from bonsai.services.repomap.ignore_patterns import git_pattern

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

log = logging.getLogger(__name__)


class Candidate(NamedTuple):
    """A file to index: workspace-relative POSIX path and its stat fingerprint."""

    path: str
    size: int
    mtime_ns: int


class Discovery(NamedTuple):
    files: list[Candidate]
    too_large: list[str]


Chain = tuple[tuple[str, "pathspec.GitIgnoreSpec"], ...]
"""The ``.gitignore`` specs that apply inside one directory, deepest first: each
with the prefix (``"a/b/"``, ``""`` for the root) its patterns are relative to."""
Pending = tuple[str, Chain]  # a directory still to scan, and the specs that apply above it


class IgnoreRules:
    """Decides whether a workspace-relative path is excluded from the map.

    A ``.gitignore`` is read confined to the workspace (a symlink may lead to
    another file inside it, never out; one that leads out, or a hard-linked one,
    is left out with a warning), and a pattern git would not accept (``\\``,
    ``!``) is dropped with a warning instead of failing the map."""

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

    def spec_for(self, rel_dir: str, present: bool | None = None) -> pathspec.GitIgnoreSpec | None:
        """The spec of ``rel_dir``'s own ``.gitignore`` (None: it has none), loaded
        once; ``present``: whether the directory's listing holds a ``.gitignore``
        entry (the walk knows; None: look)."""
        if rel_dir not in self._specs:
            rel = f"{rel_dir}/{GITIGNORE}" if rel_dir else GITIGNORE
            if present is None:
                present = os.path.lexists(os.path.join(self.root, rel))
            self._specs[rel_dir] = _load_spec(self.root, rel) if present else None
        return self._specs[rel_dir]

    def chain_for(self, rel_dir: str, parent: Chain) -> Chain:
        """The specs that apply inside ``rel_dir``: its own, then ``parent``'s
        (the chain of the directory holding it)."""
        spec = self.spec_for(rel_dir)
        return parent if spec is None else ((f"{rel_dir}/" if rel_dir else "", spec), *parent)

    def gitignored(self, rel: str, is_dir: bool) -> bool:
        """Whether the ``.gitignore`` files on the way to ``rel`` ignore it, each
        looked up from scratch (one path at a time; the walk uses ``matched``)."""
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


def matched(chain: Chain, rel: str, is_dir: bool) -> bool:
    """Whether ``chain`` (the specs of ``rel``'s directory) ignores ``rel``: the
    deepest ``.gitignore`` with a matching pattern decides, as in git."""
    probe = rel + "/" if is_dir else rel
    for prefix, spec in chain:
        result = spec.check_file(probe[len(prefix) :])
        if result.include is not None:
            return bool(result.include)
    return False


def _load_spec(root: Path, rel: str) -> pathspec.GitIgnoreSpec | None:
    try:
        with Workspace(root) as ws:
            fd, _ = ws.open_file(rel)
        with os.fdopen(fd, "rb") as fh:
            text = fh.read().decode("utf-8", "replace")
    except IsADirectoryError:
        return None  # a directory named .gitignore: walked as one, holds no patterns
    except (OSError, ConfinementError) as exc:
        log.warning("repomap: %s not used: %s", rel, exc)
        return None
    return _compile(rel, text.splitlines())


def _compile(rel: str, lines: list[str]) -> pathspec.GitIgnoreSpec:
    import pathspec  # on first use: see the top (0.1-0.2 s of a worker's start)

    try:
        return pathspec.GitIgnoreSpec.from_lines(lines, git_pattern())
    except ValueError:  # one invalid pattern: git skips it, so do we (the others stand)
        pass
    kept: list[str] = []
    for line in lines:
        try:
            pathspec.GitIgnoreSpec.from_lines([line], git_pattern())
        except ValueError:
            log.warning("repomap: %s: pattern %.80r is not valid; skipped", rel, line)
        else:
            kept.append(line)
    return pathspec.GitIgnoreSpec.from_lines(kept, git_pattern())


def _inside(root: Path, path: str) -> bool:
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip("/") + "/")


def _walk_dir(rules: IgnoreRules, rel_dir: str, parent: Chain, out: Discovery) -> list[Pending]:
    """Scan one directory; append its files to ``out``, return its subdirectories
    with the chain of specs that applies inside them (``parent``: the chain of
    the directory holding ``rel_dir``)."""
    subdirs: list[Pending] = []
    abs_dir = os.path.join(rules.root, rel_dir) if rel_dir else rules.root
    try:
        entries = sorted(os.scandir(abs_dir), key=lambda e: e.name)
    except OSError:
        return subdirs
    rules.spec_for(rel_dir, any(e.name == GITIGNORE for e in entries))
    chain = rules.chain_for(rel_dir, parent)
    prefix = f"{rel_dir}/" if rel_dir else ""
    for entry in entries:
        rel = prefix + entry.name
        try:
            if entry.is_symlink() and not _inside(rules.root, entry.path):
                continue  # a link leading out of the workspace is not part of its map
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in rules.excluded_dirs and not matched(chain, rel, True):
                    subdirs.append((rel, chain))
                continue
            st = entry.stat()
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode) or matched(chain, rel, False):
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
    parent: Chain = ()
    if under:  # the specs of the directories above ``under``
        parts = under.split("/")
        for depth in range(len(parts)):
            parent = rules.chain_for("/".join(parts[:depth]), parent)
    pending: list[Pending] = [(under, parent)]
    while pending:
        pending.extend(reversed(_walk_dir(rules, *pending.pop(), out)))
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
