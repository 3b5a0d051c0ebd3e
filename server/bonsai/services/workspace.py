"""A workspace's one identity, however a client spells its path."""

from __future__ import annotations

from pathlib import Path


def workspace_key(workspace: str) -> str:
    """``a``, ``a/``, ``a/./``, ``~/a`` and a symlink to ``a`` are one workspace."""
    return str(Path(workspace).expanduser().resolve())


def workspace_problem(workspace: Path) -> str | None:
    """Why ``workspace`` cannot hold a session (``"does not exist"``, ``"is not a directory"``).

    ``None`` when it is a folder. The one check the CLI and the daemon share: a session in a
    path that is not a folder could read, list and run nothing, and a tool call there would
    create the folder tree at a typo.
    """
    if workspace.is_dir():
        return None
    return "does not exist" if not workspace.exists() else "is not a directory"
