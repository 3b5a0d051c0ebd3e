"""Small file helpers for the token package (atomic writes)."""

from __future__ import annotations

from pathlib import Path

from bonsai.services.fs.atomic import atomic_write


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so readers see the old file or the new one, never half."""
    atomic_write(path, data, mode=0o600)
