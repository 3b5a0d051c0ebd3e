"""What a tool's output becomes at execution time, live and in a replay alike.

``finish_output`` is the one place that decides it: secrets are redacted
(through :func:`bonsai.core.turn.tool_output.redact`, on the whole text, so a secret
in the omitted middle still counts); an output longer than
``tool_output.max_chars`` is cut to its head and tail with a marker naming
``read_tool_output`` and the handle; the whole redacted text is what the caller
spills behind that handle. A redacted output is never spilled (there is no
recovery handle to read a secret back). The agent's turn (a live tool) and the
replay (a recorded output) both call it, with the same settings.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bonsai.core.turn.tool_output import redact, truncate
from bonsai.settings import ToolOutputSettings


@dataclass(frozen=True)
class FinishedOutput:
    text: str  # what the model sees
    spill: str | None  # the full text to keep behind ``handle`` (None: nothing kept)
    redactions: int
    truncated: bool
    total_chars: int


def finish_output(
    content: str,
    settings: ToolOutputSettings,
    handle: str,
    *,
    secrets: Iterable[str] = (),
    redacted: int = 0,
) -> FinishedOutput:
    """Redact, decide the spill, truncate: the tool output as the model will see it.

    ``secrets``: the daemon's own key values (removed by value); ``redacted``: how
    many secrets the tool itself already replaced (such an output is not spilled either)."""
    cleaned = redact(content, secrets)
    count = cleaned.count + redacted
    spill = None
    if not count and settings.persist_raw and len(cleaned.text) > settings.max_chars:
        spill = cleaned.text[: settings.raw_cap_bytes]
    cut = truncate(
        cleaned.text,
        settings.max_chars,
        settings.head_fraction,
        handle if spill is not None else None,
    )
    return FinishedOutput(cut.text, spill, count, cut.truncated, cut.total_chars)
