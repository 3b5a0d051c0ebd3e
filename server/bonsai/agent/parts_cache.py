"""The system parts, kept for a moment: what a polled view gathers from disk.

Every view of a session that moved assembles it again, and before this its system
parts were read from disk each time (the workspace listing, the git root, the
steering files up the tree, the skills and subagents indexes): about a tenth of a
moved view. The view worker keeps them per workspace (and per the arguments that
shape them) for at most ``fresh_s``, the time a kept view is served without a look
at the disk either (``bonsai.session.views.FRESH_S``). The volatile tail's disk
part (``git status`` against the baseline, the stale reads' hashes) is kept the
same way, per workspace, baseline, reads and peers: inside a repository each moved
view ran ``git status`` (a process, ~1 ms of the worker's CPU and more of git's).
The rules and the retrieval hint are never kept (they are the log's).

A turn's request is not served by time: :class:`DiskKeyedParts` keeps the parts
while the disk they were read from stands, checked by ``stat`` at every request
(every directory from the workspace up, each steering file, the skills and
subagents folders and files: a file created, removed, renamed or written changes
one of them), and keeps nothing whose times are within ``RACY_S`` of the reading
(a write in the same clock tick as the read would not show; git's racy-clean rule).
The volatile tail is never kept for a turn.
"""

from __future__ import annotations

import os
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from bonsai.core.context import SystemPart
from bonsai.domain import Evidence
from bonsai.services.project_context import GitBaseline, stable_parts
from bonsai.services.project_context.git import git_root
from bonsai.services.project_context.steering import steering_files
from bonsai.services.project_context.volatile import volatile_part
from bonsai.settings import ContextSettings

FRESH_S = 1.0
WORKSPACES_KEPT = 16
RACY_S = 2.0  # a part read within this of its files' last change is read again next time

Key = tuple[str, int, bool, str | None, str]
TailKey = tuple[str, str | None, tuple[Evidence, ...], tuple[str, ...]]


def parts_key(
    workspace: Path, settings: ContextSettings, repomap_text: str | None, persona: str
) -> Key:
    """What a workspace's stable parts depend on besides its files."""
    return (str(workspace), settings.steering_cap_bytes, settings.smol, repomap_text, persona)


class StablePartsCache:
    """Workspace and arguments → (when gathered, the parts); one thread's own."""

    def __init__(
        self,
        fresh_s: float = FRESH_S,
        limit: int = WORKSPACES_KEPT,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.fresh_s, self.limit, self.clock = fresh_s, limit, clock
        self._kept: OrderedDict[Key, tuple[float, list[SystemPart]]] = OrderedDict()
        self._tails: OrderedDict[TailKey, tuple[float, SystemPart]] = OrderedDict()
        self.gathered = 0  # how many times the disk was read (tests and benches)
        self.tails = 0  # how many times the volatile tail was (git status, the reads)

    def parts(
        self, workspace: Path, *, settings: ContextSettings, repomap_text: str | None, persona: str
    ) -> list[SystemPart]:
        key = parts_key(workspace, settings, repomap_text, persona)
        now = self.clock()
        kept = self._kept.get(key)
        if kept is not None and now - kept[0] < self.fresh_s:
            return list(kept[1])
        parts = stable_parts(
            workspace, settings=settings, repomap_text=repomap_text, persona=persona
        )
        self.gathered += 1
        self._kept[key] = (now, parts)
        self._kept.move_to_end(key)
        while len(self._kept) > self.limit:
            self._kept.popitem(last=False)
        return list(parts)

    def volatile(
        self,
        workspace: Path,
        baseline: GitBaseline | None,
        reads: list[Evidence],
        peers: list[str],
    ) -> SystemPart:
        """``volatile_part``, kept for ``fresh_s`` per what it is made of."""
        key: TailKey = (
            str(workspace),
            None if baseline is None else baseline.model_dump_json(),
            tuple(reads),
            tuple(peers),
        )
        now = self.clock()
        kept = self._tails.get(key)
        if kept is not None and now - kept[0] < self.fresh_s:
            return kept[1]
        part = volatile_part(workspace, baseline, reads, peers)
        self.tails += 1
        self._tails[key] = (now, part)
        self._tails.move_to_end(key)
        while len(self._tails) > self.limit:
            self._tails.popitem(last=False)
        return part


Stamp = tuple[int, int, int, int] | None  # (mtime_ns, ctime_ns, size, inode); None: absent


def _stamp(path: Path) -> Stamp:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)


def watched_paths(workspace: Path) -> list[Path]:
    """Every path whose stat tells whether ``stable_parts(workspace, …)`` could read
    differently now: the directories from the workspace up to its repository's root
    (to the filesystem root outside git: a ``.git``, a steering file or a project
    marker appearing or going changes its folder), each steering file read, and the
    skills and subagents folders and files."""
    root = git_root(workspace)
    paths: list[Path] = [workspace]
    for parent in workspace.parents:
        if root is not None and paths[-1] == root:
            break
        paths.append(parent)
    paths += steering_files(workspace, root)
    bonsai = workspace / ".bonsai"
    skills, agents = bonsai / "skills", bonsai / "agents"
    paths += [bonsai, skills, agents]
    if skills.is_dir():
        for folder in sorted(skills.iterdir()):
            paths += [folder, folder / "SKILL.md"]
    if agents.is_dir():
        paths += sorted(agents.glob("*.md"))
    return paths


class DiskKeyedParts:
    """Workspace and arguments → the parts, kept while every watched path's stat stands."""

    def __init__(self, limit: int = WORKSPACES_KEPT, racy_s: float = RACY_S) -> None:
        self.limit, self.racy_ns = limit, int(racy_s * 1e9)
        self._kept: OrderedDict[Key, tuple[list[Path], list[Stamp], list[SystemPart]]] = (
            OrderedDict()
        )
        self.gathered = 0  # how many times the disk was read (tests and benches)

    def parts(
        self, workspace: Path, *, settings: ContextSettings, repomap_text: str | None, persona: str
    ) -> list[SystemPart]:
        key = parts_key(workspace, settings, repomap_text, persona)
        kept = self._kept.get(key)
        if kept is not None and [_stamp(path) for path in kept[0]] == kept[1]:
            self._kept.move_to_end(key)
            return list(kept[2])
        self._kept.pop(key, None)
        before = time.time_ns()
        paths = watched_paths(workspace)
        stamps = [_stamp(path) for path in paths]
        parts = stable_parts(
            workspace, settings=settings, repomap_text=repomap_text, persona=persona
        )
        self.gathered += 1
        if watched_paths(workspace) == paths and self._settled(stamps, paths, before):
            self._kept[key] = (paths, stamps, parts)
            while len(self._kept) > self.limit:
                self._kept.popitem(last=False)
        return list(parts)

    def _settled(self, stamps: list[Stamp], paths: list[Path], before: int) -> bool:
        """Nothing changed while the parts were read, and nothing just before (a change
        in the same tick of the file system's clock would keep the same times)."""
        if [_stamp(path) for path in paths] != stamps:
            return False
        newest = max((max(s[0], s[1]) for s in stamps if s is not None), default=0)
        return newest < before - self.racy_ns
