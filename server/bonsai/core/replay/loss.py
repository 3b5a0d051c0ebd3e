"""Needed-later loss: did the recorded agent later use what a removed span held?

Pure: no I/O. A stage removes a span from the window (a stub, a fold, an
archived episode); the recording shows what the agent wrote afterwards. A
**distinctive item** of a span is a path (``src/app/models.py``), an identifier
with an underscore, a dot or an inner capital (``parse_header``,
``QuerySet.filter``, ``fooBar``; not Python's builtins such as ``ValueError``
nor names under a standard-library module such as ``os.path.join``), a number
of four or more digits or with a decimal point (``4012``, ``3.14``), or a whole line of at least
:data:`MIN_LINE` characters (URLs are left out: they name a resource any agent
can write down). It is **needed later** when it appears in a later
assistant message (its text or tool-call arguments) while it is nowhere in the
window sent for that message: the managed agent could only have written it by
getting the span back.

The measure weighs a needed item by the span's lines that hold it (a line is
the unit a tool output carries information in), so a 5,000-token output of
which one listed path was needed counts that line, not the whole output.
"""

from __future__ import annotations

import builtins
import keyword
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass

MIN_LINE = 24  # a verbatim line this long is distinctive on its own
_PATH = re.compile(r"(?<![\w/.-])(?:[\w.-]+/)+[\w.-]*\w|\b[\w-]+\.[A-Za-z]{1,5}\b")
_IDENT = re.compile(r"\b[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+\b|\b[A-Za-z_]\w*\b")
_NUMBER = re.compile(r"(?<![\w.])(?:\d{4,}|\d+\.\d+)(?![\w.])")
_CAMEL = re.compile(r"[a-z][A-Z]")
_COMMON_SUFFIX = frozenset({"com", "org", "net", "txt", "md", "0", "1"})
_GENERAL = frozenset(dir(builtins)) | frozenset(keyword.kwlist)
_STDLIB = frozenset(sys.stdlib_module_names)
_URL = re.compile(r"\b[a-z][\w+.-]*://\S+")  # a URL names a resource, not a finding


def _distinct_ident(word: str) -> bool:
    if len(word) < 5 or (word.startswith("__") and word.endswith("__")):
        return False
    if word in _GENERAL or word.split(".", 1)[0] in _STDLIB:
        return False  # the language's own names (``ValueError``, ``os.path.join``)
    return "_" in word.strip("_") or "." in word or bool(_CAMEL.search(word))


_FILE_SUFFIX = re.compile(
    r"\.(?:py|pyi|pyx|c|h|cc|cpp|rs|go|js|ts|tsx|jsx|java|rb|txt|json|toml|cfg|ini|md|rst|sh|yml|yaml|html|css|lock)$"
)


def _file_name(word: str) -> bool:
    """A name with a dot that is a file (``models.py``), not ``os.path`` or ``example.com``."""
    if word.rsplit(".", 1)[-1] in _COMMON_SUFFIX:
        return False
    return word.split(".", 1)[0] not in _STDLIB or bool(_FILE_SUFFIX.search(word))


def written(item: str, text: str) -> bool:
    """``item`` appears in ``text`` as a whole (no letter, digit or underscore
    glued to either side: ``setup.py`` is not written in ``reproduce_setup.py``)."""
    start = text.find(item)
    while start >= 0:
        end = start + len(item)
        before = text[start - 1] if start else " "
        after = text[end] if end < len(text) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return True
        start = text.find(item, start + 1)
    return False


def items_of_line(line: str) -> set[str]:
    """The distinctive items of one line."""
    found: set[str] = set()
    whole, line = line.strip(), _URL.sub(" ", line)
    for match in _PATH.finditer(line):
        path = match.group(0).strip(".")
        if len(path) >= 4 and ("/" in path or _file_name(path)):
            found.add(path)
    for match in _IDENT.finditer(line):
        if _distinct_ident(match.group(0)):
            found.add(match.group(0))
    found.update(m.group(0) for m in _NUMBER.finditer(line))
    if len(whole) >= MIN_LINE:
        found.add(whole)
    return found


@dataclass(frozen=True)
class SpanItems:
    """A removed message's distinctive items, each with the lines that hold it."""

    message_id: str
    lines: dict[str, list[int]]  # item → line numbers holding it
    text_lines: list[str]

    @classmethod
    def of(cls, message_id: str, text: str) -> SpanItems:
        lines: dict[str, list[int]] = {}
        text_lines = text.splitlines()
        for n, line in enumerate(text_lines):
            for item in items_of_line(line):
                lines.setdefault(item, []).append(n)
        return cls(message_id, lines, text_lines)

    def used_in(self, later: str, window: str) -> set[str]:
        """Items written in ``later`` that ``window`` does not hold."""
        return {i for i in self.lines if written(i, later) and not written(i, window)}

    def without(self, own: str) -> SpanItems:
        """These items less the ones ``own`` (what the agent itself wrote before
        the span) holds: an output echoing the agent's own words (the file it
        created, the path it asked for) held nothing only it could give back."""
        lines = {i: ns for i, ns in self.lines.items() if not written(i, own)}
        return SpanItems(self.message_id, lines, self.text_lines)

    def needed_text(self, items: Iterable[str]) -> str:
        """The lines holding ``items`` (what the needed part weighs)."""
        numbers = sorted({n for i in items for n in self.lines.get(i, [])})
        return "\n".join(self.text_lines[n] for n in numbers)
