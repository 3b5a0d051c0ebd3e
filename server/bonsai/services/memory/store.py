"""The two file stores (user tier, project tier) and their merged view.

The markdown files are the source of truth. A store only ever writes the
files it creates or edits on request, always atomically; files it cannot
parse are reported as :class:`MemoryIssue` and left exactly as they are.
Disabling an entry sets ``enabled: false`` in its front matter (enabling
removes the key again), so the state travels with the file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from bonsai.services.fs.atomic import atomic_write
from bonsai.services.memory.entry import (
    EntryFile,
    EntryFormatError,
    MemoryEntry,
    MemoryIssue,
    Tier,
    read_entry,
)
from bonsai.services.memory.frontmatter_edit import edit_entry
from bonsai.services.memory.naming import name_problem


class MemoryStoreError(Exception):
    """A memory operation was refused; the message is meant for the user."""


@dataclass
class StoreScan:
    entries: dict[str, tuple[EntryFile, MemoryEntry]] = field(default_factory=dict)
    issues: list[MemoryIssue] = field(default_factory=list)


class MemoryStore:
    """One tier's folder of ``*.md`` entries."""

    def __init__(self, root: Path, tier: Tier, *, base: Path) -> None:
        self.root = root
        self.tier: Tier = tier
        self.base = base  # the folder the store must stay inside (home or workspace)
        # parsed files by name, with the (size, mtime, inode) they were parsed at
        self._parsed: dict[str, tuple[tuple[int, int, int], tuple[EntryFile, MemoryEntry]]] = {}

    def scan(self) -> StoreScan:
        scan = StoreScan()
        if not self.root.is_dir():
            return scan
        try:
            self.check_root()
        except MemoryStoreError as exc:
            scan.issues.append(MemoryIssue(path=self.root, problem=f"store ignored: {exc}"))
            return scan
        try:
            with os.scandir(self.root) as listing:
                found = sorted(
                    (item for item in listing if item.name.endswith(".md")), key=_name_of
                )
        except OSError as exc:
            scan.issues.append(MemoryIssue(path=self.root, problem=f"store unreadable: {exc}"))
            return scan
        for item in found:
            self._scan_one(item, scan)
        listed = {item.name for item in found}
        for gone in [name for name in self._parsed if name not in listed]:
            del self._parsed[gone]
        return scan

    def _scan_one(self, item: os.DirEntry[str], scan: StoreScan) -> None:
        """One listed file: parsed again only when its size, mtime or inode
        changed (the listing's own type and stat, no other file-system call)."""
        if item.is_symlink() and not _inside(Path(item.path).resolve(), self.root.resolve()):
            scan.issues.append(
                MemoryIssue(
                    path=self.root / item.name, problem="symlink pointing outside the store"
                )
            )
            return
        try:
            if not item.is_file():
                return
            info = item.stat()
            stamp = (info.st_size, info.st_mtime_ns, info.st_ino)
            known = self._parsed.get(item.name)
            if known is not None and known[0] == stamp:
                pair = known[1]
            else:
                pair = read_entry(self.root / item.name, self.tier)
                self._parsed[item.name] = (stamp, pair)
        except (EntryFormatError, OSError) as exc:
            self._parsed.pop(item.name, None)
            scan.issues.append(MemoryIssue(path=self.root / item.name, problem=str(exc)))
            return
        scan.entries[pair[1].name] = pair

    def path_for(self, name: str) -> Path:
        """The file of entry ``name``, after checking it cannot escape the store."""
        problem = name_problem(name)
        if problem:
            raise MemoryStoreError(problem)
        self.check_root()
        path = self.root / f"{name}.md"
        if path.is_symlink():
            raise MemoryStoreError(f"{path} is a symbolic link; bonsai will not write through it")
        return path

    def check_root(self) -> None:
        """Refuse a store folder that is (or sits under) a link leading elsewhere,
        e.g. a cloned repository whose ``.bonsai/memory`` points at ``~/.ssh``."""
        expected = self.base.resolve() / self.root.relative_to(self.base)
        if self.root.resolve() != expected:
            raise MemoryStoreError(
                f"{self.root} resolves to {self.root.resolve()}, outside {expected}; "
                "refusing to write through a symbolic link"
            )

    def write(self, path: Path, entry: EntryFile) -> None:
        self.check_root()
        atomic_write(path, entry.to_bytes(), mode=None)  # keeps an edited entry's bits

    def delete(self, name: str) -> Path:
        path = self.path_for(name)
        if not path.is_file():
            raise MemoryStoreError(f"no {self.tier} memory entry named {name!r}")
        path.unlink()
        return path

    def edit(
        self,
        parsed: EntryFile,
        path: Path,
        *,
        today: date,
        set_keys: dict[str, Any] | None = None,
        remove_keys: tuple[str, ...] = (),
        body: str | None = None,
        touch: bool = True,
    ) -> EntryFile:
        """Edit one entry in place; ``updated`` is set to ``today`` when
        something else changed and ``touch`` is true."""
        edited = edit_entry(parsed, set_keys=set_keys, remove_keys=remove_keys, body=body)
        if edited is parsed:
            return parsed
        if touch:
            edited = edit_entry(edited, set_keys={"updated": today})
        self.write(path, edited)
        return edited


def _name_of(item: os.DirEntry[str]) -> str:
    return item.name


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


@dataclass
class MergedView:
    """Both tiers merged: a project entry hides a user entry of the same name."""

    entries: dict[str, tuple[EntryFile, MemoryEntry]]
    shadowed: list[MemoryEntry]
    issues: list[MemoryIssue]


def merge(user: StoreScan, project: StoreScan | None) -> MergedView:
    entries = dict(user.entries)
    shadowed: list[MemoryEntry] = []
    issues = list(user.issues)
    if project is not None:
        for name, pair in project.entries.items():
            if name in entries:
                shadowed.append(entries[name][1])
            entries[name] = pair
        issues.extend(project.issues)
    ordered = {name: entries[name] for name in sorted(entries)}
    return MergedView(entries=ordered, shadowed=shadowed, issues=issues)
