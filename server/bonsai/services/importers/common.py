"""Small helpers every importer shares."""

from __future__ import annotations

from pathlib import PurePath

from bonsai.domain import Message
from bonsai.services.importers.errors import ImportFormatError

TITLE_MAX = 80


def check_run(run: int, runs: int, source: str) -> None:
    if runs < 1:
        raise ImportFormatError(source, "the file holds no run to import")
    if not 0 <= run < runs:
        plural = "run" if runs == 1 else "runs"
        raise ImportFormatError(
            source, f"run {run} does not exist: the file holds {runs} {plural} (0..{runs - 1})"
        )


def title_from(messages: list[Message], source: str) -> str:
    """The first non-empty line of the first user message, else the file name."""
    for message in messages:
        if message.role != "user":
            continue
        for line in message.content.splitlines():
            if line.strip():
                return _clip(line.strip())
    return PurePath(source).name or source


def _clip(text: str) -> str:
    return text if len(text) <= TITLE_MAX else text[: TITLE_MAX - 1] + "…"
