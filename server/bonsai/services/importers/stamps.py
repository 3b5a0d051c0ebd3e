"""When each imported message was written, for formats that record it.

Claude Code and Codex CLI lines carry a ``timestamp`` (ISO 8601), OpenHands
events too; mini-swe-agent messages may carry one (``timestamp``, or
``extra.timestamp`` in newer versions), and a model reply saved with its provider
response says when that request was served (``extra.response.created``, the
chat-completions ``created`` field); SWE-agent trajectories and aider chat
histories do not. An importer calls :meth:`Stamps.record` before each record it
reads: every message that record adds gets the record's time. A record
without a time takes the last known one (the first known one before any), so
a recording with at least one time has one per message; a recording with none
has ``times = None`` and the replay uses its pause model.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from bonsai.domain import Message

MS_EPOCH = 1e11  # a number above this is in milliseconds (epoch seconds reach it in 5138)


def parse_time(value: Any) -> float | None:
    """Epoch seconds from an ISO 8601 string (``Z`` or an offset; naive is UTC)
    or a number (seconds, or milliseconds when that large); ``None`` otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
        if number != number or number <= 0:  # NaN or not a time
            return None
        return number / 1000 if number > MS_EPOCH else number
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        stamp = datetime.fromisoformat(text)
    except ValueError:
        return None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    return stamp.timestamp()


def response_time(record: dict[str, Any]) -> float | None:
    """When the provider served the request a reply answers (``extra.response.created``)."""
    extra = record.get("extra")
    response = extra.get("response") if isinstance(extra, dict) else None
    return parse_time(response.get("created")) if isinstance(response, dict) else None


def record_time(record: dict[str, Any]) -> float | None:
    """The time a JSON record states (``timestamp``, ``created_at``, ``extra.timestamp``)."""
    for key in ("timestamp", "created_at"):
        found = parse_time(record.get(key))
        if found is not None:
            return found
    extra = record.get("extra")
    return parse_time(extra.get("timestamp")) if isinstance(extra, dict) else None


class Stamps:
    """One time per message, filled as an importer adds messages."""

    def __init__(self) -> None:
        self._times: list[float | None] = []
        self._last: float | None = None

    def record(self, messages: list[Message], when: float | None) -> None:
        """A record written at ``when`` starts; ``messages`` is the importer's list
        so far (what it holds now came from earlier records)."""
        self._settle(messages)
        if when is not None:
            self._last = when

    def sent(self, messages: list[Message], when: float | None) -> None:
        """A request went out at ``when`` with ``messages`` (the importer's list so
        far): the newest of them was written by then, and what follows is later."""
        self._settle(messages)
        if when is None:
            return
        if self._times and (self._times[-1] is None or self._times[-1] < when):
            self._times[-1] = when
        self._last = max(when, self._last or when)

    def _settle(self, messages: list[Message]) -> None:
        missing = len(messages) - len(self._times)
        self._times.extend([self._last] * max(0, missing))

    def result(self, messages: list[Message]) -> list[float | None] | None:
        """The times of ``messages`` (the importer's final list, same length), or
        ``None`` when the recording stated none."""
        self._settle(messages)
        known = [t for t in self._times if t is not None]
        if not known:
            return None
        first = known[0]
        out: list[float | None] = [first if t is None else t for t in self._times[: len(messages)]]
        return out
