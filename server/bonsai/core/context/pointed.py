"""What the agent wrote after a view: the names it points at before a fold.

After viewing a file's lines the agent's own messages say what it works on: it
writes the names of the view it is about to change or call (``parse_header``,
``self._save_table``). When a fold removes the view, its trace in the summary
names those first (``core/context/trace.py``), unless the request still holds
them. Only the agent's messages between the view and the fold are read, never
anything after the fold.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from bonsai.core.context.pipeline_types import Item
from bonsai.domain import Message

AFTER_MESSAGES = 6  # the agent's messages after a view that are read
SAID_CHARS = 6_000  # of each of them (its text, and each tool-call argument)
_NAME = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\b")
_CAMEL = re.compile(r"[a-z][A-Z]")


def said_text(message: Message) -> str:
    """What the agent wrote in one message: its text and its tool calls' arguments
    (decoded, so a command's own lines are lines)."""
    parts = [message.content[:SAID_CHARS]]
    for call in message.tool_calls:
        try:
            args = json.loads(call.arguments or "{}")
        except ValueError:
            parts.append(call.arguments[:SAID_CHARS])
            continue
        values = args.values() if isinstance(args, dict) else [args]
        parts.extend(v[:SAID_CHARS] for v in values if isinstance(v, str))
    return "\n".join(parts)


def said_after(session: Sequence[Item], at: int) -> str:
    """The agent's first :data:`AFTER_MESSAGES` messages after position ``at`` of
    ``session`` (the messages so far: nothing after the fold that asks)."""
    said = []
    for item in session[at + 1 :]:
        if item.message.role == "assistant":
            said.append(said_text(item.message))
            if len(said) == AFTER_MESSAGES:
                break
    return "\n".join(said)


def _distinct(name: str) -> bool:
    if len(name) < 5 or (name.startswith("__") and name.endswith("__")):
        return False
    return "_" in name.strip("_") or "." in name or bool(_CAMEL.search(name))


def said_names(said: str) -> frozenset[str]:
    """The distinctive names in the agent's text (identifiers of at least 5
    characters with an underscore, a dot or an inner capital)."""
    return frozenset(m.group(0) for m in _NAME.finditer(said) if _distinct(m.group(0)))
