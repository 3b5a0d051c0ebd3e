"""Crash-safe file replacement for memory entries (the one helper in ``services.fs``)."""

from __future__ import annotations

from pathlib import Path

from bonsai.services.fs.atomic import atomic_write as _atomic_write


def atomic_write(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` atomically (old bytes or new, never torn).

    ``mode`` None keeps an existing entry's bits (a new one gets 0o666 less the umask)."""
    _atomic_write(path, data, mode=mode)
