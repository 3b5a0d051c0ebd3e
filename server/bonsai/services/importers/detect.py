"""``--format auto``: tell a recording's format from its content alone.

The file name never decides. Detection reads the first 64 KiB, or a longer first
line whole up to 8 MiB (``detection_head``), and the last 4 KiB (where
mini-swe-agent writes ``trajectory_format``). JSON Lines are
recognised by their first record, parsed; a single JSON document by its keys,
matched as JSON keys (a quote not preceded by a backslash, then a colon), so
the same words inside string values never count.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bonsai.services.importers.errors import ImportFormatError
from bonsai.services.importers.jsonread import BOM
from bonsai.services.importers.model import FORMATS, FormatName

HEAD_BYTES = 64 * 1024
LONGEST_FIRST_LINE = 8 * 1024 * 1024  # a first record this long is still read whole
TAIL_BYTES = 4 * 1024
AIDER_HEADER = re.compile(r"^# aider chat started at ", re.MULTILINE)
AIDER_TURN = re.compile(r"^#### ", re.MULTILINE)
JSON_START = re.compile(r"^\s*(?:\{|\[\s*[\{\]])")

CODEX_KINDS = frozenset({"session_meta", "response_item", "turn_context", "event_msg", "compacted"})
RESPONSE_ITEMS = frozenset(
    {"message", "function_call", "function_call_output", "reasoning", "local_shell_call"}
)
CLAUDE_KEYS = ("parentUuid", "leafUuid", "isSidechain")
CLAUDE_KINDS = frozenset(
    {"user", "assistant", "summary", "system", "file-history-snapshot", "queue-operation"}
)
OPENHANDS_RUN_KEYS = ("history", "instance_id", "instruction", "git_patch")


def _key(name: str) -> re.Pattern[str]:
    return re.compile(r'(?<!\\)"' + re.escape(name) + r'"\s*:')


MINI_FORMAT = re.compile(r'(?<!\\)"trajectory_format"\s*:\s*"mini-swe-agent')
MINI_VERSION = _key("mini_version")
TRAJECTORY, HISTORY, MESSAGES, ROLE = (
    _key(k) for k in ("trajectory", "history", "messages", "role")
)
OH_EVENT = re.compile(r'(?<!\\)"(?:action|observation)"\s*:\s*"')
ANTHROPIC_BLOCK = re.compile(
    r'(?<!\\)"type"\s*:\s*"(?:tool_use|tool_result|thinking|redacted_thinking)"'
)
OPENAI_CALLS = re.compile(r'(?<!\\)"(?:tool_calls|tool_call_id)"\s*:|(?<!\\)"role"\s*:\s*"tool"')


def _first_record(text: str) -> tuple[Any, bool]:
    """The first line parsed as JSON (``None`` when it is not a whole JSON value),
    and whether more non-blank lines follow it (JSON Lines)."""
    stripped = text.lstrip()
    first, _, rest = stripped.partition("\n")
    try:
        value = json.loads(first)
    except ValueError:
        return None, False
    return value, bool(rest.strip())


def _jsonl_format(record: dict[str, Any]) -> FormatName | None:
    kind = record.get("type")
    if kind in CODEX_KINDS and "payload" in record:
        return "codex"
    if any(k in record for k in CLAUDE_KEYS) or (kind in CLAUDE_KINDS and "sessionId" in record):
        return "claude-code"
    if kind in RESPONSE_ITEMS or {"id", "timestamp", "instructions"} <= record.keys():
        return "codex"  # an early rollout: its meta line, then bare response items
    if any(k in record for k in OPENHANDS_RUN_KEYS):
        return "openhands"
    if ("action" in record or "observation" in record) and ("id" in record or "source" in record):
        return "openhands"
    if "role" in record:
        return "anthropic" if ANTHROPIC_BLOCK.search(json.dumps(record)) else "openai"
    return None


def _document_format(text: str, tail: str) -> FormatName | None:
    if MINI_FORMAT.search(tail) or MINI_FORMAT.search(text) or MINI_VERSION.search(text):
        return "mini-swe-agent"
    stripped = text.lstrip()
    if stripped.startswith("{"):
        if TRAJECTORY.search(text):
            return "swe-agent"
        first = stripped.split("\n", 1)[0]
        if HISTORY.search(first) or any(_key(k).search(first) for k in OPENHANDS_RUN_KEYS[1:]):
            return "openhands"
        if MESSAGES.search(text) or ROLE.search(first):
            return _chat_kind(text)
        return None
    if OH_EVENT.search(text):
        return "openhands"  # an exported event stream: a JSON array of events
    return _chat_kind(text)


def _chat_kind(text: str) -> FormatName:
    if ANTHROPIC_BLOCK.search(text) and not OPENAI_CALLS.search(text):
        return "anthropic"
    return "openai"


def _is_aider(text: str) -> bool:
    return bool(AIDER_HEADER.search(text)) or (
        not JSON_START.match(text) and bool(AIDER_TURN.search(text))
    )


def _json_format(text: str, tail: str) -> FormatName | None:
    if not JSON_START.match(text):
        return None
    record, more = _first_record(text)
    if more and isinstance(record, dict):
        return _jsonl_format(record)
    return _document_format(text, tail)


SNIFFERS: tuple[Callable[[str, str], FormatName | None], ...] = (
    _json_format,  # first: JSON strings hold no raw newline, so no aider header either
    lambda text, tail: "aider" if _is_aider(text) else None,
)


def detection_head(data: bytes) -> bytes:
    """The bytes detection reads: the first ``HEAD_BYTES``, or, when the first line
    is longer (a pasted file in Claude Code's first record), that whole line and
    ``HEAD_BYTES`` after it, never more than ``LONGEST_FIRST_LINE`` plus that."""
    end = data.find(b"\n", 0, LONGEST_FIRST_LINE)
    if end < HEAD_BYTES:
        return data[:HEAD_BYTES]
    return data[: end + HEAD_BYTES]


def detect_format(path: Path, head_bytes: bytes, tail_bytes: bytes = b"") -> FormatName:
    """The format of the recording whose first bytes are ``head_bytes`` (and last
    bytes ``tail_bytes``); ``path`` only names it in errors.

    Raises :class:`ImportFormatError` listing the supported formats when the
    content fits none of them."""
    text = head_bytes.decode("utf-8", errors="replace").removeprefix(BOM)
    tail = tail_bytes.decode("utf-8", errors="replace")
    for sniff in SNIFFERS:
        found = sniff(text, tail)
        if found is not None:
            return found
    raise ImportFormatError(
        str(path),
        "unrecognised format; the supported formats are "
        f"{', '.join(FORMATS)} (pass --format to choose one)",
    )
