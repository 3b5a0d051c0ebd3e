"""``--format auto``: tell a recording's format from its name and first bytes.

Content decides; the file extension only breaks ties. Keys are matched as
JSON keys (a quote not preceded by a backslash, then a colon), so the same
words inside string values never count.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from bonsai.services.importers.errors import ImportFormatError
from bonsai.services.importers.jsonread import BOM
from bonsai.services.importers.model import FORMATS, FormatName

HEAD_BYTES = 64 * 1024
AIDER_HEADER = re.compile(r"^# aider chat started at ", re.MULTILINE)
AIDER_TURN = re.compile(r"^#### ", re.MULTILINE)


def _key(name: str) -> re.Pattern[str]:
    return re.compile(r'(?<!\\)"' + re.escape(name) + r'"\s*:')


TRAJECTORY, HISTORY, MESSAGES, ROLE = (
    _key("trajectory"),
    _key("history"),
    _key("messages"),
    _key("role"),
)
OPENHANDS_KEYS = (_key("instance_id"), _key("instruction"), _key("git_patch"))


def _first_line(text: str) -> str:
    return text.lstrip().split("\n", 1)[0]


def _is_aider(text: str) -> bool:
    return bool(AIDER_HEADER.search(text)) or (
        not text.lstrip().startswith(("{", "[")) and bool(AIDER_TURN.search(text))
    )


def _is_swe_agent(text: str) -> bool:
    return text.lstrip().startswith("{") and bool(TRAJECTORY.search(text))


def _is_openhands(text: str) -> bool:
    if not text.lstrip().startswith("{") or TRAJECTORY.search(text):
        return False
    line = _first_line(text)
    return bool(HISTORY.search(line)) or any(key.search(line) for key in OPENHANDS_KEYS)


def _is_openai(text: str) -> bool:
    stripped = text.lstrip()
    if stripped.startswith("["):
        return True
    if not stripped.startswith("{") or HISTORY.search(text) or TRAJECTORY.search(text):
        return False
    return bool(MESSAGES.search(text)) or bool(ROLE.search(_first_line(text)))


SNIFFERS: tuple[tuple[FormatName, Callable[[str], bool]], ...] = (
    ("aider", _is_aider),
    ("swe-agent", _is_swe_agent),
    ("openhands", _is_openhands),
    ("openai", _is_openai),
)


def format_from_name(path: Path) -> FormatName | None:
    name = path.name.lower()
    if name.endswith(".traj.json"):
        return "openai"
    if name.endswith(".traj"):
        return "swe-agent"
    if name.endswith(".md"):
        return "aider"
    return None


def detect_format(path: Path, head_bytes: bytes) -> FormatName:
    """The format of the file at ``path`` whose first bytes are ``head_bytes``.

    Raises :class:`ImportFormatError` listing the formats when the content fits
    none of them, or several and the extension does not settle it."""
    text = head_bytes.decode("utf-8", errors="replace").removeprefix(BOM)
    hits = [name for name, sniff in SNIFFERS if sniff(text)]
    if len(hits) == 1:
        return hits[0]
    by_name = format_from_name(path)
    if by_name is not None and (by_name in hits or not hits):
        return by_name
    choices = ", ".join(FORMATS)
    if hits:
        raise ImportFormatError(
            str(path),
            f"ambiguous format: looks like {' and '.join(hits)}; pass a format ({choices})",
        )
    raise ImportFormatError(
        str(path), f"unrecognised format; pass one of the supported formats ({choices})"
    )
