"""Superseded reads, kept up to date as the session grows (one call costs its new items).

``candidates.superseded_reads`` scans the whole log backwards on every call.
:class:`Supersession` gives the same answer walking forwards: a new read marks
the earlier reads of its file that it covers (the reason names the latest
covering read, as the backward scan does), a new edit or write marks every
earlier read of its file not yet changed (the reason names the nearest later
edit; an edit outranks a covering read). Kept in the
session's ``AssemblyMemo`` and fed only the items it has not seen; when the log
it saw is no longer a prefix of the items (a branch switch, an edited message),
it starts again, so a stale tracker never changes a result.
"""

from __future__ import annotations

from bonsai.core.context.candidates import superseded_reads
from bonsai.core.context.memo import AssemblyMemo
from bonsai.core.context.pipeline_types import Item
from bonsai.core.context.reuse import REUSE_PREFIX
from bonsai.domain import Evidence, Message


def superseded_of(items: list[Item], memo: AssemblyMemo | None) -> dict[str, str]:
    """``superseded_reads(items)``, from the session's tracker when there is a memo."""
    if memo is None:
        return superseded_reads(items)
    if memo.supersession is None:
        memo.supersession = Supersession()
    return memo.supersession.update(items)  # type: ignore[no-any-return]


class Supersession:
    """Read item id → why a later item makes it redundant, for a growing log."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, Message]] = []
        self.out: dict[str, str] = {}
        self._reads: dict[str, list[tuple[Evidence, str]]] = {}  # path → reads, oldest first
        self._edited: set[str] = set()  # reads superseded by an edit (final)
        self._view: dict[str, str] = {}  # what callers get (never changed under them)

    def update(self, items: list[Item]) -> dict[str, str]:
        """The superseded reads of ``items`` (the same mapping ``superseded_reads`` returns)."""
        if not self._extends(items):
            self.__init__()  # type: ignore[misc]
        return self.extend(items[len(self.seen) :])

    def extend(self, new: list[Item]) -> dict[str, str]:
        """Take ``new``, the items after the ones seen (the caller checked that
        the log it saw is still its prefix); the superseded reads of all."""
        changed = False
        for item in new:
            changed = self._add(item) or changed
            self.seen.append((item.id, item.message))
        if changed:
            self._view = dict(self.out)
        return self._view

    @property
    def view(self) -> dict[str, str]:
        """The answer for the items seen (never changed under a caller)."""
        return self._view

    def _extends(self, items: list[Item]) -> bool:
        if len(items) < len(self.seen):
            return False
        for (item_id, message), item in zip(self.seen, items, strict=False):
            if item.id != item_id or (item.message is not message and item.message != message):
                return False
        return True

    def _add(self, item: Item) -> bool:
        """Take one new item; whether any answer changed."""
        ev = item.message.evidence
        if item.message.role != "tool" or ev is None or ev.path is None or not ev.ok:
            return False
        earlier = self._reads.get(ev.path, [])
        changed = False
        if ev.kind in ("edit", "write"):
            for _, read_id in earlier:
                if read_id not in self._edited:
                    self._edited.add(read_id)
                    self.out[read_id] = f"superseded: `{ev.path}` was changed later ({item.id})"
                    changed = True
        elif ev.kind == "read":
            if item.message.content.startswith(REUSE_PREFIX):
                return False  # a reuse pointer carries no bytes: it supersedes nothing
            for old, read_id in earlier:
                if read_id not in self._edited and ev.covers(old):
                    self.out[read_id] = f"superseded: `{ev.path}` was read again later ({item.id})"
                    changed = True
            self._reads.setdefault(ev.path, []).append((ev, item.id))
        return changed
