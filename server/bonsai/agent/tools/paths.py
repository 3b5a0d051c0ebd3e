"""Confining tool paths to the session's workspace (symlinks included)."""

from __future__ import annotations

from pathlib import Path

from bonsai.agent.tools.base import ToolFailure


def resolve_in_workspace(workspace: Path, raw: str) -> Path:
    """The real path of ``raw`` inside ``workspace``, or ToolFailure.

    Relative paths are taken from the workspace root. The check runs on the
    fully resolved path, so a symlink pointing outside is refused too."""
    root = workspace.resolve()
    candidate = Path(raw)
    if not candidate.is_absolute():
        candidate = root / candidate
    resolved = candidate.resolve()
    if resolved != root and root not in resolved.parents:
        raise ToolFailure(f"{raw!r} is outside the workspace {root}; refused")
    return resolved


def relative(workspace: Path, path: Path) -> str:
    try:
        return str(path.relative_to(workspace.resolve())) or "."
    except ValueError:
        return str(path)
