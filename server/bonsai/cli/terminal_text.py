"""Text from outside bonsai made safe to print on a terminal.

What the model writes, what a tool printed, a file's contents, a session's title,
a memory entry: any of it can hold escape sequences a terminal acts on (OSC 52
writes the clipboard, OSC 0 sets the title, ``ESC [2K`` plus a carriage return
erases what was printed before, so an approval prompt could show one command and
run another), single-byte C1 controls that some terminals read as ``ESC [``, and
bidi overrides that show text in another order than it runs. ``shown`` writes
each such character as a visible escape (``\\x1b``, ``\\u202e``); newlines and
tabs stay, a CRLF becomes a newline. bonsai's own colours are added after.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any, TextIO

# C0 controls but tab and newline, DEL, C1 controls; bidi embeddings, overrides, isolates and marks
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def shown(text: str, *, newlines: bool = True) -> str:
    """``text`` with every character a terminal would act on written out visibly;
    ``newlines`` False writes newlines out too (for one-line fields)."""
    text = text.replace("\r\n", "\n")
    if not newlines:
        text = text.replace("\n", "\\n")
    return _UNSAFE.sub(_visible, text)


def terminal_json(value: Any, *, indent: int | None = None) -> str:
    """``value`` as JSON that keeps its non-ASCII text readable (``ensure_ascii``
    off) but writes DEL, C1 controls and bidi marks as ``\\uXXXX`` escapes: the same
    parsed value, nothing a terminal acts on (C0 controls JSON escapes itself)."""
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    return _UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def write_content(text: str, out: TextIO | None = None) -> None:
    """A document (a memory entry, a map) as it is when redirected to a file or pipe,
    and with its escapes shown on a terminal."""
    out = out or sys.stdout
    out.write(shown(text) if out.isatty() else text)
