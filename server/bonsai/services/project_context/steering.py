"""Steering files: AGENTS.md → CLAUDE.md → .cursorrules, nearest-first up the tree.

The walk starts at the workspace and goes up to the git root when the
workspace is inside a git repository, otherwise up to the filesystem root.
Each file is capped (``steering_cap_bytes``) with a visible note; a file that
is not valid UTF-8 or cannot be read is shown with a clear note instead of
failing the turn.
"""

from __future__ import annotations

import os
from pathlib import Path

from bonsai.core.context import SystemPart

STEERING_NAMES = ("AGENTS.md", "CLAUDE.md", ".cursorrules")


def _chain(workspace: Path, stop: Path | None) -> list[Path]:
    """Directories from ``workspace`` up to ``stop`` (inclusive) or the root."""
    out = [workspace]
    for parent in workspace.parents:
        if stop is not None and out[-1] == stop:
            break
        out.append(parent)
    return out


def steering_files(workspace: Path, stop: Path | None) -> list[Path]:
    """Steering files in reading order: nearest directory first, then by name order."""
    found: list[Path] = []
    for directory in _chain(workspace, stop):
        for name in STEERING_NAMES:
            path = directory / name
            if path.is_file() and _stays_in(path, directory):
                found.append(path)
    return found


def _stays_in(path: Path, directory: Path) -> bool:
    """A steering file that is a symlink counts only when it points within its own
    folder's tree (``CLAUDE.md -> AGENTS.md``): a cloned repository must not be able
    to put ``~/.aws/credentials`` into the system prompt."""
    if not path.is_symlink():
        return True
    real, top = os.path.realpath(path), os.path.realpath(directory)
    return real.startswith(top.rstrip("/") + "/")


def _cut(data: bytes, cap: int) -> bytes:
    """``data`` cut to at most ``cap`` bytes, never inside a UTF-8 sequence."""
    if len(data) <= cap:
        return data
    end = cap
    while end > 0 and (data[end] & 0xC0) == 0x80:
        end -= 1
    return data[:end]


def steering_text(path: Path, rel: str, cap: int) -> str:
    """The part text of one steering file, with notes for caps and bad bytes."""
    try:
        with path.open("rb") as file:  # never more than the cap: a hostile file may be huge
            data = file.read(cap + 4)  # + a cut character's tail
            size = max(len(data), os.fstat(file.fileno()).st_size)
    except OSError as exc:
        return f"## Steering: {rel}\n[bonsai: {rel} could not be read: {exc.strerror or exc}]"
    shown = _cut(data, cap)
    notes = []
    try:
        text = shown.decode("utf-8")
    except UnicodeDecodeError:
        text = shown.decode("utf-8", errors="replace")
        notes.append(f"[bonsai: {rel} is not valid UTF-8; undecodable bytes are shown as \ufffd]")
    if len(shown) < size:
        notes.append(
            f"[bonsai: {rel} is truncated: it has {size:,} bytes, "
            f"the first {len(shown):,} are shown (steering cap {cap:,} bytes)]"
        )
    body = text.rstrip("\n")
    return "\n".join([f"## Steering: {rel}", body, *notes])


def steering_parts(workspace: Path, stop: Path | None, cap: int) -> list[SystemPart]:
    parts = []
    for path in steering_files(workspace, stop):
        rel = os.path.relpath(path, workspace)
        parts.append(
            SystemPart(
                id=f"sys:steering:{rel}",
                label=f"steering {rel}",
                text=steering_text(path, rel, cap),
            )
        )
    return parts
