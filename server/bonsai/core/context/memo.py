"""Per-session caches that make a turn cost its new content, not the session's length.

Optional: pass one :class:`AssemblyMemo` per session in ``AssembleInput.memo``
and keep it between calls. It remembers, per item id, the message's token
count, its digest for the prefix hash, its ledger row and its stub's count, and
re-checks the message on every hit (identity first, then equality), so a stale
entry can never change a result. The superseded reads are kept up to date as
the log grows (``supersede.Supersession``), the whole per-item analysis is
carried from call to call on the session's tape (``tape.Tape``), and so is the
episodes' segmentation (``episodes_stage.KeptSegments``). Assembling with or
without a memo gives the same bytes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from bonsai.domain import Message

_SEP = b"\x1e"


def message_digest(message: Message) -> bytes:
    """sha256 of every field of ``message`` that reaches the wire."""
    calls = "\x1f".join(f"{c.id}\x1f{c.name}\x1f{c.arguments}" for c in message.tool_calls)
    ids = f"{message.name or ''}\x1f{message.tool_call_id or ''}"
    head = f"{message.role}\x1f{ids}\x1f{message.images}"
    data = f"{head}\x1d{calls}\x1d{message.content}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).digest()


@dataclass(slots=True)
class _Entry:
    message: Message
    value: Any


class _Table:
    """One cache keyed by a string, valid only for the exact message it was made for."""

    def __init__(self) -> None:
        self.data: dict[str, _Entry] = {}

    def get(self, key: str, message: Message) -> Any:
        entry = self.data.get(key)
        if entry is None:
            return None
        if entry.message is message or entry.message == message:
            entry.message = message
            return entry.value
        return None

    def put(self, key: str, message: Message, value: Any) -> None:
        self.data[key] = _Entry(message, value)


class AssemblyMemo:
    """Caches for one session (see the module docstring). Not thread-safe."""

    def __init__(self) -> None:
        self.counts = _Table()
        self.digests = _Table()
        self.rows = _Table()
        self.stubbed = _Table()
        self.summary_entries = _Table()  # a message's entries in a deterministic summary
        self.supersession: Any = None  # a ``supersede.Supersession``, made on first use
        self.tape: Any = None  # a ``tape.Tape``: the last analysis, per item (first use)
        self.segments: Any = None  # ``episodes_stage.KeptSegments``: the episodes' pass

    def clear(self) -> None:
        self.__init__()  # type: ignore[misc]
