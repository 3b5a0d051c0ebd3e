"""Small helpers every importer shares."""

from __future__ import annotations

import re
from pathlib import PurePath

from bonsai.domain import Message
from bonsai.services.importers.errors import ImportFormatError

TITLE_MAX = 80
TAG = re.compile(r"</?[A-Za-z][\w:-]*(?:\s[^<>]*)?/?>")
HEADING = re.compile(r"^\s*(?:#{1,6}\s+|[-*>]\s+)")
SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def check_run(run: int, runs: int, source: str) -> None:
    if runs < 1:
        raise ImportFormatError(source, "the file holds no run to import")
    if not 0 <= run < runs:
        plural = "run" if runs == 1 else "runs"
        raise ImportFormatError(
            source, f"run {run} does not exist: the file holds {runs} {plural} (0..{runs - 1})"
        )


def title_from(messages: list[Message], source: str) -> str:
    """The task's title, from the first user message with words (see
    :func:`task_title`), else the file name."""
    for message in messages:
        if message.role != "user":
            continue
        title = task_title(message.content)
        if title:
            return title
    return PurePath(source).name or source


def task_title(text: str) -> str:
    """What a person would call the task: the first line of words, with markup
    (tags such as ``<pr_description>``, heading and quote markers) removed; a
    lead-in line ending in ``:`` ("Consider the following PR description:")
    gives way to the line after it; the line is cut after its first sentence."""
    lines = [_plain(line) for line in text.splitlines()]
    lines = [line for line in lines if line]
    for index, line in enumerate(lines):
        if line.endswith(":") and index + 1 < len(lines):
            continue
        first = SENTENCE_END.split(line, maxsplit=1)[0]
        return _clip(first)
    return ""


def _plain(line: str) -> str:
    return HEADING.sub("", TAG.sub("", line)).strip()


def _clip(text: str) -> str:
    return text if len(text) <= TITLE_MAX else text[: TITLE_MAX - 1] + "…"
