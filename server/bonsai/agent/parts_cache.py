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
The rules and the retrieval hint are never kept (they are the log's). A turn's
request never goes through this cache: it reads the disk every time.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from bonsai.core.context import SystemPart
from bonsai.domain import Evidence
from bonsai.services.project_context import GitBaseline, stable_parts
from bonsai.services.project_context.volatile import volatile_part
from bonsai.settings import ContextSettings

FRESH_S = 1.0
WORKSPACES_KEPT = 16

Key = tuple[str, int, bool, str | None, str]
TailKey = tuple[str, str | None, tuple[Evidence, ...], tuple[str, ...]]


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
        key: Key = (
            str(workspace),
            settings.steering_cap_bytes,
            settings.smol,
            repomap_text,
            persona,
        )
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
