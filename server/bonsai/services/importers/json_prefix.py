"""Whether a text is a JSON value cut short: the start of one, not a whole one.

A recording whose writer was killed mid-write ends in such a line
(``{"type":"assist``). ``is_cut_json`` tells it apart from a line that is wrong
(``{"type":}``, ``{"a":1}}``): the text must be a proper prefix of something
``json.loads`` accepts (the same grammar: strict strings, ``NaN`` and
``Infinity`` allowed), so only the end of the text may be missing.
"""

from __future__ import annotations

import re
from enum import Enum, auto

_WS = re.compile(r"[ \t\n\r]*")
_CHARS = r'(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*+'
_STRING = re.compile('"' + _CHARS + '"')
_STRING_CUT = re.compile('"' + _CHARS + r"(?:\\(?:u[0-9a-fA-F]{0,3})?)?\Z")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_NUMBER_CUT = re.compile(
    r"-?(?:(?:0|[1-9][0-9]*)(?:\.(?:[0-9]+(?:[eE][+-]?[0-9]*)?)?|[eE][+-]?[0-9]*)?)?\Z"
)
_LITERALS = ("true", "false", "null", "NaN", "Infinity", "-Infinity")


class _Want(Enum):
    VALUE = auto()  # a value must come
    VALUE_OR_CLOSE = auto()  # just after "["
    KEY_OR_CLOSE = auto()  # just after "{"
    KEY = auto()  # after "," in an object
    COLON = auto()
    NEXT = auto()  # after a value: ",", a closer, or the end


class _Cut:
    """A token that runs to the end of the text, where more could follow."""


CUT = _Cut()


def _scalar(text: str, pos: int) -> int | _Cut | None:
    """The end of the string, number or literal at ``pos``; ``CUT`` when the text
    ends inside one; ``None`` when none starts there."""
    if text[pos] == '"':
        if _STRING_CUT.match(text, pos):
            return CUT
        string = _STRING.match(text, pos)
        return string.end() if string else None
    if _NUMBER_CUT.match(text, pos):
        return CUT
    for literal in _LITERALS:
        if text.startswith(literal, pos):
            return pos + len(literal)
        if len(text) - pos < len(literal) and literal.startswith(text[pos:]):
            return CUT
    number = _NUMBER.match(text, pos)
    return number.end() if number else None


def is_cut_json(text: str) -> bool:
    """True when ``text`` is a proper prefix of a JSON value; False when it is
    blank, whole, or wrong before its end."""
    stack: list[str] = []
    want = _Want.VALUE
    pos = 0
    while True:
        match = _WS.match(text, pos)
        pos = match.end() if match else pos
        if pos == len(text):
            return bool(stack)
        char = text[pos]
        if want is _Want.NEXT:
            if not stack:
                return False  # something after a whole value
            if char == ",":
                want = _Want.KEY if stack[-1] == "{" else _Want.VALUE
            elif char == {"{": "}", "[": "]"}[stack[-1]]:
                stack.pop()
            else:
                return False
            pos += 1
            continue
        if want is _Want.COLON:
            if char != ":":
                return False
            want, pos = _Want.VALUE, pos + 1
            continue
        if (want is _Want.VALUE_OR_CLOSE and char == "]") or (
            want is _Want.KEY_OR_CLOSE and char == "}"
        ):
            stack.pop()
            want, pos = _Want.NEXT, pos + 1
            continue
        if want in (_Want.KEY, _Want.KEY_OR_CLOSE):
            if char != '"':
                return False
            end = _scalar(text, pos)
            if end is None or isinstance(end, _Cut):
                return end is CUT
            want, pos = _Want.COLON, end
            continue
        if char in "{[":
            stack.append(char)
            want = _Want.KEY_OR_CLOSE if char == "{" else _Want.VALUE_OR_CLOSE
            pos += 1
            continue
        end = _scalar(text, pos)
        if end is None or isinstance(end, _Cut):
            return end is CUT
        want, pos = _Want.NEXT, end
