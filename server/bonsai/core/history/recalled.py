"""Background data on the user lane, as a person reads it.

The daemon adds recalled memory, related earlier history and a retry's
reflection to a user turn as one data message (``name`` ``memory``). The
model needs the framing; a person needs to know what was recalled. This turns
the note into sources, titles and plain text: framing tags, the untrusted-data
preamble and message ids are removed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

Source = Literal["memory", "history", "reflection", "data"]
DATA_NAMES = ("memory", "reflection")  # user-lane messages that are data, not the user's words

_MEMORY = re.compile(r"<background-data[^>]*>(.*?)</background-data>", re.S)
_HISTORY = re.compile(r"<related_context>(.*?)</related_context>", re.S)
_REFLECTION = re.compile(r"<reflection>(.*?)</reflection>", re.S)
_FRAME_TAGS = re.compile(r"</?untrusted-data[^>]*>")
_HEADING = re.compile(r"^## (.+?)(?: \((?:project|user) memory[^)]*\))?$", re.M)
_IDS = re.compile(r"\b(?:m|msg|turn|call|t)_[0-9a-f]{8,}\b")
_MEMORY_PREAMBLE = re.compile(
    r"^Background data recalled from bonsai memory.*?precedence\.\s*", re.S
)


@dataclass(frozen=True)
class Recalled:
    sources: list[Source]
    titles: list[str] = field(default_factory=list)
    text: str = ""


def _clean(text: str) -> str:
    text = _FRAME_TAGS.sub("", text)
    text = _IDS.sub("an earlier message", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def recalled(content: str) -> Recalled:
    """What a background-data note holds, for display."""
    sources: list[Source] = []
    titles: list[str] = []
    parts: list[str] = []
    for match in _MEMORY.finditer(content):
        body = _MEMORY_PREAMBLE.sub("", match.group(1).strip())
        sources.append("memory")
        titles.extend(h.strip() for h in _HEADING.findall(body))
        parts.append(_clean(_HEADING.sub("", body)))  # the names are the titles
    for match in _HISTORY.finditer(content):
        sources.append("history")
        titles.append("related earlier messages")
        parts.append(_clean(match.group(1)))
    for match in _REFLECTION.finditer(content):
        sources.append("reflection")
        titles.append("notes on the failed attempt")
        parts.append(_clean(match.group(1)))
    if not sources:
        return Recalled(sources=["data"], text=_clean(content))
    return Recalled(sources=list(dict.fromkeys(sources)), titles=titles, text="\n\n".join(parts))
