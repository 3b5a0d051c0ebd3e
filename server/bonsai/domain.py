"""Domain types shared by every layer: messages, tool calls, read evidence.

These are *not* wire types (see ``bonsai.protocol``); the JSON-RPC layer converts
at one boundary. They are pure data: no I/O, no clock.
"""

from __future__ import annotations

import hashlib
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["system", "user", "assistant", "tool"]
MessageStatus = Literal["complete", "interrupted", "error"]
EvidenceKind = Literal["read", "edit", "write", "list", "search", "command"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolCall(_Frozen):
    """One tool invocation requested by the model. ``arguments`` is the raw JSON
    text exactly as the model produced it (kept byte for byte for cache stability)."""

    id: str
    name: str
    arguments: str = "{}"


class Evidence(_Frozen):
    """Typed evidence of what a tool result covers, so later stages can detect
    superseded reads and read reuse without looking at tool names.

    ``start_line``/``end_line`` are 1-based and inclusive; ``None`` means the
    whole file. ``content_hash`` is the sha256 of the bytes the read returned
    (or of the file after an edit)."""

    kind: EvidenceKind
    path: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    content_hash: str | None = None
    ok: bool = True

    def covers(self, other: Evidence) -> bool:
        """True when this read returns at least the range ``other`` returned."""
        if self.path is None or self.path != other.path:
            return False
        if self.start_line is None and self.end_line is None:
            return True
        lo = self.start_line or 1
        hi = self.end_line if self.end_line is not None else 10**12
        o_lo = other.start_line or 1
        o_hi = other.end_line if other.end_line is not None else 10**12
        return lo <= o_lo and o_hi <= hi


class Message(_Frozen):
    """One entry of a conversation, in a provider-neutral shape."""

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    evidence: Evidence | None = None
    status: MessageStatus = "complete"
    is_error: bool = False  # a tool result reporting a failure (still sent to the model)
    images: int = Field(default=0, ge=0, description="image payloads removed before storage")


class StoredMessage(_Frozen):
    """A message as it lives in the append-only session log."""

    message_id: str
    session_id: str
    seq: int
    created_at: float
    message: Message


def content_hash(text: str | bytes) -> str:
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()
