"""Tool output at execution time: head/tail truncation (redaction: ``core.redaction``).

Redaction runs once on the full text, before truncation, so a secret in the
omitted middle still counts. A redacted result gets no recovery handle, so the
secret can never be read back through ``read_tool_output``.
"""

from __future__ import annotations

from dataclasses import dataclass

from bonsai.core.redaction import REDACTED, Redaction, redact

__all__ = ["REDACTED", "Redaction", "Truncated", "page", "redact", "truncate"]


@dataclass(frozen=True)
class Truncated:
    text: str
    truncated: bool
    total_chars: int


def truncate(text: str, max_chars: int, head_fraction: float, handle: str | None) -> Truncated:
    """Keep head (70%) + tail (30%) with a marker naming how to read the rest."""
    if len(text) <= max_chars:
        return Truncated(text, False, len(text))
    head = int(max_chars * head_fraction)
    tail = max_chars - head
    omitted = len(text) - head - tail
    if handle:
        call = f'{{"id": "{handle}", "offset": {head}, "limit": {min(omitted, max_chars)}}}'
        how = f'read_tool_output({call}) pages the rest; add "grep" to filter lines'
    else:
        how = "the full output was not kept (it contained redacted secrets)"
    marker = f"\n\n[... {omitted} characters omitted of {len(text)}; {how} ...]\n\n"
    return Truncated(text[:head] + marker + text[len(text) - tail :], True, len(text))


def page(text: str, offset: int, limit: int, grep: str | None, max_chars: int) -> str:
    """One page of a spilled output, re-truncated at the same cap."""
    if grep:
        lines = [line for line in text.splitlines() if grep in line]
        body = "\n".join(lines)
        header = f"[{len(lines)} lines matching {grep!r}]\n"
    else:
        body = text[offset : offset + limit]
        end = offset + len(body)
        header = f"[characters {offset}..{end} of {len(text)}]\n"
    cut = truncate(body, max_chars, 0.7, None)
    return header + cut.text
