"""What the recall tool returns: pages and hits inside an untrusted-data frame.

Recalled text is old conversation and tool output: data, never instructions.
Every tag-like form of the frame's marker is neutralised inside the content so
recalled text cannot end the frame early.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bonsai.domain import StoredMessage, content_hash

OPEN = '<untrusted-data source="recall">'
CLOSE = "</untrusted-data>"
PAGE_CHARS = 12_000
REPEAT_PREFIX = "[recall unchanged]"


# any form a reader may take for the frame's marker: capitals, spaces, a newline
# before the ``>``, an opening one (as the memory note's frame, ``memory/inject.py``)
_TAG_LIKE = re.compile(r"<(?=\s*/?\s*untrusted-data)", re.IGNORECASE)


def frame(body: str) -> str:
    safe = _TAG_LIKE.sub("&lt;", body)
    return f"{OPEN}\n{safe}\n{CLOSE}"


def render_message(stored: StoredMessage) -> str:
    message = stored.message
    head = f"--- {message.role} {stored.message_id}"
    if message.name:
        head += f" ({message.name})"
    calls = "".join(f"\n[call {c.name} {c.arguments}]" for c in message.tool_calls)
    return f"{head}\n{message.content}{calls}"


def episode_page(
    messages: Sequence[StoredMessage], number: int, cursor: int
) -> tuple[str, int | None]:
    """One page of an episode's messages from ``cursor``; the next cursor or None."""
    out: list[str] = []
    size, index = 0, cursor
    while index < len(messages):
        text = render_message(messages[index])
        if out and size + len(text) > PAGE_CHARS:
            break
        out.append(text[:PAGE_CHARS])
        size += len(text)
        index += 1
    more = index if index < len(messages) else None
    footer = f'\n[more: recall({{"episode": {number}, "cursor": {more}}})]' if more else ""
    header = f"Episode #{number}, messages {cursor + 1}-{index} of {len(messages)}"
    return frame(f"{header}\n" + "\n".join(out) + footer), more


def describe(stored: StoredMessage) -> str:
    """What a message is, in a few words: "user question", "tool result of read_file"."""
    message = stored.message
    if message.role == "tool":
        return f"tool result of {message.name or 'a tool'}"
    return {"user": "user question", "assistant": "assistant answer"}.get(
        message.role, f"{message.role} message"
    )


def fetch_call(message_id: str, cursor: int = 0) -> str:
    """The recall call that returns one message's exact text (from line ``cursor``)."""
    args = f'"message": "{message_id}"' + (f', "cursor": {cursor}' if cursor else "")
    return f"recall({{{args}}})"


def message_page(stored: StoredMessage, cursor: int) -> tuple[str, int | None]:
    """The exact text of one message from line ``cursor`` (0-based), a page at a
    time; the next cursor or None. Pages join back into the original."""
    lines = stored.message.content.splitlines(keepends=True)
    if cursor and cursor >= len(lines):
        return frame(
            f"message {stored.message_id} has {len(lines)} lines; nothing from {cursor}"
        ), None
    out: list[str] = []
    size, index = 0, cursor
    while index < len(lines):
        if out and size + len(lines[index]) > PAGE_CHARS:
            break
        out.append(lines[index])
        size += len(lines[index])
        index += 1
    more = index if index < len(lines) else None
    body = "".join(out)
    if more is None:
        body += "".join(f"\n[call {c.name} {c.arguments}]" for c in stored.message.tool_calls)
    header = (
        f"Message {stored.message_id} ({describe(stored)}), lines {cursor + 1}-{index} "
        f"of {len(lines)}, the exact original text:"
    )
    footer = f"[more: {fetch_call(stored.message_id, more)}]" if more is not None else ""
    joint = "" if not footer or body.endswith("\n") else "\n"
    return frame(f"{header}\n{body}{joint}{footer}"), more


def repeat_pointer(page: str, earlier_results: Sequence[str]) -> str | None:
    """A short pointer when the very same page was already returned in this context."""
    digest = content_hash(page)
    for earlier in earlier_results:
        if content_hash(earlier) == digest:
            same = f"this page is unchanged since the earlier recall (sha {digest[:12]})"
            return f"{REPEAT_PREFIX} {same}."
    return None
