"""A fast path for the front matter nearly every entry has.

Entries bonsai writes, and most written by hand, hold a few ``key: value``
lines: ``name``, ``description``, ``type``, ``created``, ``updated``,
``enabled``, each a plain, single- or double-quoted one-line string, an ISO
date or ``true``/``false``. :func:`parse_simple_front` reads exactly that
subset with string operations and returns ``None`` for anything else (a
comment, another key, a nested value, an escape, a character YAML treats
specially), so the caller falls back to the full YAML parser, which gives the
same values and names the line and column of any error. On every text it
accepts it gives what the YAML parser gives (``tests/memory/test_memory_build.py``
checks that on generated front matter).
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

KEYS = frozenset({"name", "description", "type", "created", "updated", "enabled"})

# words a YAML 1.1 plain scalar resolves to true, false or null
_RESOLVED = frozenset(
    f(word)
    for word in ("yes", "no", "true", "false", "on", "off", "null")
    for f in (str.lower, str.capitalize, str.upper)
)
_LINE = re.compile(r"([a-z]+):(?: +(.*))?")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
# characters YAML reads as themselves anywhere in a one-line scalar: printable
# ASCII and the printable non-ASCII planes, minus the line and paragraph
# separators and the byte-order mark (YAML line breaks or stream markers)
_PLAIN_CHARS = re.compile(
    "[\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]*"
)


def parse_simple_front(front: str) -> dict[str, Any] | None:
    """The mapping of a simple front matter, or ``None`` when the text needs
    the full YAML parser."""
    data: dict[str, Any] = {}
    for line in front.split("\n"):
        if line.endswith("\r"):
            line = line[:-1]
        if not line:
            continue
        match = _LINE.fullmatch(line)
        if match is None or match[1] not in KEYS or match[1] in data:
            return None
        raw = match[2]
        if raw is None:
            data[match[1]] = None
            continue
        value = _scalar(raw.rstrip(" "))
        if value is _UNSURE:
            return None
        data[match[1]] = value
    return data


_UNSURE = object()


def _scalar(raw: str) -> object:
    """The value of one scalar as YAML reads it, or ``_UNSURE``."""
    if not raw or not (raw.isprintable() if raw.isascii() else _PLAIN_CHARS.fullmatch(raw)):
        return _UNSURE
    first = raw[0]
    if first == '"':
        inner = raw[1:-1]
        if len(raw) < 2 or raw[-1] != '"' or '"' in inner or "\\" in inner:
            return _UNSURE
        return inner
    if first == "'":
        inner = raw[1:-1]
        if len(raw) < 2 or raw[-1] != "'" or "'" in inner.replace("''", ""):
            return _UNSURE
        return inner.replace("''", "'")
    if first.isdigit():
        if _DATE.fullmatch(raw) is None:
            return _UNSURE
        try:
            return date(int(raw[:4]), int(raw[5:7]), int(raw[8:]))
        except ValueError:
            return _UNSURE
    if not ("a" <= first <= "z" or "A" <= first <= "Z"):
        return _UNSURE
    if raw in ("true", "false"):
        return raw == "true"
    if raw in _RESOLVED or ": " in raw or " #" in raw or raw.endswith(":"):
        return _UNSURE
    return raw
