"""The useful lines of a tool's result, for a one-glance terminal preview.

A test run shows its summary (``Ran 3 tests`` / ``OK``, pytest's ``2 passed``),
a search its first matched lines, an edit its changed lines, a read its span
and size; anything else its first meaningful line.
"""

from __future__ import annotations

import re
from typing import Any

from bonsai.core.context.reuse import REUSE_PREFIX

_SUMMARY = re.compile(
    r"^(Ran \d+ tests? in|OK\b|FAILED \(|=+ .*\b(passed|failed|error)|\d+ (passed|failed)\b"
    r"|FAIL:|ERROR:|\w*Error:)",
)
_EXIT = re.compile(r"^\[(exit code -?\d+|timed out.*)\]$")
_RULE = re.compile(r"^[\W_]+$")  # a line of dashes or equals signs
_NUMBERED = re.compile(r"^\s*(\d+)\t")
_TAG = re.compile(r"^</?[\w-]+( [^>]*)?>$")  # a data frame's opening or closing tag
MAX_LINES = 3


def _meaningful(lines: list[str]) -> list[str]:
    return [line for line in lines if line.strip() and not _RULE.match(line.strip())]


def _command(text: str) -> list[str]:
    lines = text.strip().splitlines()
    exit_line = lines.pop().strip() if lines and _EXIT.match(lines[-1].strip()) else ""
    summary = [line.strip() for line in lines if _SUMMARY.match(line.strip())]
    picked = summary[-MAX_LINES:] if summary else _meaningful(lines)[-1:]
    return [*picked, exit_line] if exit_line else picked


def _search(text: str) -> list[str]:
    lines = _meaningful(text.strip().splitlines())
    shown = lines[:MAX_LINES]
    if len(lines) > MAX_LINES:
        shown.append(f"… {len(lines) - MAX_LINES} more matches")
    return shown


def _edit(text: str) -> list[str]:
    lines = text.strip().splitlines()
    changed = [
        line
        for line in lines[1:]
        if line[:1] in "+-" and not line.startswith(("+++", "---")) and line[1:].strip()
    ]
    shown = [lines[0], *changed[: MAX_LINES * 2]] if lines else []
    if len(changed) > MAX_LINES * 2:
        shown.append(f"… {len(changed) - MAX_LINES * 2} more changed lines")
    return shown


def _read(args: dict[str, Any], text: str) -> list[str]:
    numbers = [int(m.group(1)) for line in text.splitlines() if (m := _NUMBERED.match(line))]
    if not numbers:
        return _meaningful(text.strip().splitlines())[:1]
    path = args.get("path", "file")
    return [f"{path}: lines {numbers[0]}-{numbers[-1]} ({len(text):,} characters)"]


def _recall(text: str) -> list[str]:
    """Each hit's header, with its most telling line (a failure, else its first)."""
    out: list[str] = []
    body: list[str] = []
    for line in [*_meaningful(text.splitlines()), "--- end"]:
        stripped = line.strip()
        if _TAG.match(stripped) or stripped.startswith("[answering"):
            continue
        if stripped.startswith("--- "):
            if body:
                telling = [b for b in body if _SUMMARY.match(b.strip())] or body
                out.append("  " + telling[0].strip())
            body = []
            if stripped != "--- end":
                out.append(stripped)
        else:
            body.append(line)
    return out[: MAX_LINES * 2] or _meaningful(text.splitlines())[:1]


def preview(name: str | None, args: Any, result: str) -> list[str]:
    """At most a few lines that say what the tool found or did."""
    args = args if isinstance(args, dict) else {}
    text = result or ""
    if text.startswith(REUSE_PREFIX):  # a read-reuse pointer says it all
        return [text.strip()]
    if name == "bash":
        lines = _command(text)
    elif name in ("grep", "glob"):
        lines = _search(text)
    elif name in ("edit_file", "write_file"):
        lines = _edit(text)
    elif name == "read_file":
        lines = _read(args, text)
    elif name == "recall":
        lines = _recall(text)
    else:
        lines = _meaningful(text.strip().splitlines())[:1]
    return lines or ["(empty)"]
