"""Reading text and JSON with precise error locations.

Every helper raises :class:`ImportFormatError` naming the file and the line and
column (for syntax) or the JSON path (for structure) of the problem.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from bonsai.services.importers.errors import ImportFormatError
from bonsai.services.importers.json_prefix import is_cut_json

BOM = "\ufeff"


@dataclass(frozen=True)
class Loc:
    """Where a JSON value came from: the file and, for JSONL, its 1-based line."""

    source: str
    line: int | None = None

    def error(self, path: str, message: str) -> ImportFormatError:
        return ImportFormatError(self.source, message, line=self.line, json_path=path or None)


def decode(data: bytes, source: str) -> str:
    """UTF-8 text of ``data`` with a leading byte-order mark removed; nothing else
    is touched (line endings and trailing spaces stay as they are). A character cut
    at the very end (the writer killed mid-write, inside a multi-byte character) is
    left out, so the line it ended is reported as cut (``load_jsonl``) rather than
    the whole file refused as not UTF-8; a bad byte anywhere else is still an error."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.end == len(data) and exc.reason == "unexpected end of data":
            return decode(data[: exc.start], source)
        raise _not_utf8(data, exc, source) from None
    return text.removeprefix(BOM)


def _not_utf8(data: bytes, exc: UnicodeDecodeError, source: str) -> ImportFormatError:
    line = data.count(b"\n", 0, exc.start) + 1
    column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
    return ImportFormatError(source, f"not valid UTF-8 ({exc.reason})", line=line, column=column)


def load_json(text: str, source: str) -> Any:
    """Parse one JSON document, reporting syntax errors by line and column."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportFormatError(
            source, f"invalid JSON: {exc.msg}", line=exc.lineno, column=exc.colno
        ) from None


@dataclass(frozen=True)
class JsonLines:
    """The rows of a JSON Lines text and, when the recording ended mid-write, the
    1-based number of its cut last line (left out)."""

    rows: list[tuple[int, Any]]
    source: str
    cut: int | None = None

    def report(self, warnings: list[str]) -> None:
        """Put the cut line's warning first in ``warnings``."""
        if self.cut is not None:
            warnings.insert(0, cut_warning(self.source, self.cut))


def cut_warning(source: str, line: int) -> str:
    return f"line {line} of {source} is cut off (the recording ended mid-write); it was skipped"


def load_jsonl(text: str, source: str) -> JsonLines:
    """Parse JSON Lines: ``(line_number, value)`` for every non-blank line. Only
    the last line, when no newline ends it and it is the start of a JSON value,
    is taken as cut by a writer that was killed and left out (``JsonLines.cut``);
    any other bad line is an error with its line and column."""
    rows: list[tuple[int, Any]] = []
    raws = text.split("\n")
    for index, raw in enumerate(raws):
        line = raw.removesuffix("\r")
        if not line.strip():
            continue
        try:
            rows.append((index + 1, json.loads(line)))
        except json.JSONDecodeError as exc:
            if index == len(raws) - 1 and is_cut_json(line):
                if not rows:
                    raise ImportFormatError(
                        source,
                        "is cut off (the recording ended mid-write) before its first whole line",
                        line=index + 1,
                    ) from None
                return JsonLines(rows, source, cut=index + 1)
            raise ImportFormatError(
                source, f"invalid JSON: {exc.msg}", line=index + 1, column=exc.colno
            ) from None
    return JsonLines(rows, source)


def as_dict(value: Any, loc: Loc, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise loc.error(path, f"expected a JSON object, found {_kind(value)}")
    return value


def as_list(value: Any, loc: Loc, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise loc.error(path, f"expected a JSON array, found {_kind(value)}")
    return value


def opt_str(obj: dict[str, Any], key: str, loc: Loc, path: str) -> str | None:
    """``obj[key]`` when it is a string, ``None`` when absent or null."""
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    raise loc.error(f"{path}.{key}", f"expected a string, found {_kind(value)}")


def req_str(obj: dict[str, Any], key: str, loc: Loc, path: str) -> str:
    value = opt_str(obj, key, loc, path)
    if value is None:
        raise loc.error(f"{path}.{key}", "missing required string")
    return value


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"
