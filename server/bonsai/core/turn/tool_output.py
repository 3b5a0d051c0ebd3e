"""Tool output at execution time: secret redaction and head/tail truncation.

Redaction runs once on the full text, before truncation, so a secret in the
omitted middle still counts. A redacted result gets no recovery handle, so the
secret can never be read back through ``read_tool_output``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

REDACTED = "[REDACTED]"

_SECRET_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S),
    re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{20,}"),
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"),
    re.compile(r"\bxox[baprs]-[A-Za-z0-9\-]{10,}\b"),
    re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b"),
    re.compile(r"\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\b"),
)
# .env style: NAME_WITH_SECRET_WORD = value
_ASSIGNMENT = re.compile(
    r"(?im)^(\s*(?:export\s+)?[A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)"
    r"[A-Z0-9_]*\s*[=:]\s*)([\"']?)([^\s\"'#]{4,})\2"
)


@dataclass(frozen=True)
class Redaction:
    text: str
    count: int


def redact(text: str) -> Redaction:
    count = 0

    def sub(_: re.Match[str]) -> str:
        nonlocal count
        count += 1
        return REDACTED

    for pattern in _SECRET_PATTERNS:
        text = pattern.sub(sub, text)

    def assignment(match: re.Match[str]) -> str:
        nonlocal count
        if match.group(3) == REDACTED:
            return match.group(0)
        count += 1
        return f"{match.group(1)}{match.group(2)}{REDACTED}{match.group(2)}"

    text = _ASSIGNMENT.sub(assignment, text)
    return Redaction(text, count)


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
