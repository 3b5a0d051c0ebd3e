"""Small helpers both wire formats share: SSE framing and chunking of text."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_WORD = re.compile(r"\s*\S+|\s+")
ARG_PIECE = 16
CREATED_BASE = 1_700_000_000  # fixed, so identical runs give identical bytes


@dataclass(frozen=True)
class ReplyUsage:
    """Token counts the simulator reports for one call (prompt total includes cache)."""

    prompt: int
    cached: int
    cache_written: int
    completion: int


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    body = data if isinstance(data, str) else dumps(data)
    try:
        return f"{head}data: {body}\n\n".encode()
    except UnicodeEncodeError:  # a lone surrogate: JSON can still send it, escaped
        if isinstance(data, str):
            raise
        body = json.dumps(data, separators=(",", ":"))
        return f"{head}data: {body}\n\n".encode()


def text_pieces(text: str) -> list[str]:
    """Split text into word-sized deltas that concatenate back to the original."""
    return _WORD.findall(text)


def arg_pieces(arguments: str) -> list[str]:
    return [arguments[i : i + ARG_PIECE] for i in range(0, len(arguments), ARG_PIECE)]
