"""Does the workspace's .gitignore hide project memory from git?"""

from __future__ import annotations

from pathlib import Path

import pathspec

PROJECT_MEMORY_DIR = Path(".bonsai") / "memory"

ADVISORY = (
    "{gitignore} ignores .bonsai/memory/, so project memory will not be committed. "
    "To share it with the repository, ignore the folder's contents rather than the folder "
    "and re-include the memory store:\n"
    "    .bonsai/*\n"
    "    !.bonsai/memory/\n"
    "(A plain '.bonsai/' line cannot be undone by a later '!' rule: git does not look "
    "inside an ignored directory. bonsai never edits your .gitignore.)"
)


def gitignore_advisory(workspace: Path) -> str | None:
    """An advisory when the workspace's top-level ``.gitignore`` keeps project
    memory out of git, ``None`` when it would be tracked or there is no
    .gitignore. Patterns are matched with ``pathspec``'s git semantics plus
    git's rule that nothing below an ignored directory can be re-included."""
    gitignore = workspace / ".gitignore"
    if not gitignore.is_file():
        return None
    lines = gitignore.read_text(encoding="utf-8", errors="replace").splitlines()
    if not memory_ignored(pathspec.GitIgnoreSpec.from_lines(lines)):
        return None
    return ADVISORY.format(gitignore=gitignore)


def memory_ignored(spec: pathspec.PathSpec) -> bool:
    probes = [".bonsai/", ".bonsai/memory/", (PROJECT_MEMORY_DIR / "entry.md").as_posix()]
    return any(spec.match_file(probe) for probe in probes)
