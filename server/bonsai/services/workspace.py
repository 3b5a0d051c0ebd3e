"""A workspace's one identity, however a client spells its path."""

from __future__ import annotations

from pathlib import Path


def workspace_key(workspace: str) -> str:
    """``a``, ``a/``, ``a/./``, ``~/a`` and a symlink to ``a`` are one workspace."""
    return str(Path(workspace).expanduser().resolve())
