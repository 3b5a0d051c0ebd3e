"""The memory entry file format: one fact per markdown file.

::

    ---
    name: prefers-thiserror
    description: Use thiserror enums at module boundaries
    type: preference          # user | preference | project | reference
    created: 2026-07-01
    updated: 2026-07-01
    ---
    Module-level errors are thiserror enums; anyhow stays in main.

The file stem (kebab-case, at most 64 characters) is the authoritative name.
Front matter is located and parsed with ``python-frontmatter``'s YAML
handler; :class:`EntryFile` keeps the original text split into four raw
segments so that writing an unmodified entry reproduces the file byte for byte
(see :mod:`bonsai.services.memory.frontmatter_edit` for minimal edits).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any, Literal, get_args

import yaml
from frontmatter.default_handlers import YAMLHandler
from pydantic import BaseModel, ConfigDict

from bonsai.domain import content_hash
from bonsai.services.memory.naming import NAME_MAX, name_problem
from bonsai.services.memory.simple_front import parse_simple_front

EntryType = Literal["user", "preference", "project", "reference"]
Tier = Literal["user", "project"]
ENTRY_TYPES: tuple[str, ...] = get_args(EntryType)
TIERS: tuple[str, ...] = get_args(Tier)

BODY_MAX_BYTES = 4096
DESCRIPTION_MAX = 160
FILE_MAX_BYTES = 64 * 1024
_BOM = "\ufeff"
_HANDLER = YAMLHandler()


class MemoryIssue(BaseModel):
    """A memory file that was skipped (malformed or oversized). Reported only:
    bonsai never rewrites or deletes such a file."""

    model_config = ConfigDict(frozen=True)

    path: Path
    problem: str


class MemoryEntry(BaseModel):
    """A parsed, valid entry as the rest of bonsai sees it."""

    model_config = ConfigDict(frozen=True)

    name: str
    tier: Tier
    type: EntryType
    description: str
    body: str
    created: date | None = None
    updated: date | None = None
    enabled: bool = True
    path: Path
    digest: str  # sha256 of the file's bytes

    def search_text(self) -> str:
        """What the retrieval index sees: name words, description and body."""
        words = self.name.replace("-", " ")
        if self.body.strip() == self.description.strip():
            return f"{words}\n{self.body}"
        return f"{words}\n{self.description}\n{self.body}"


@dataclass(frozen=True)
class EntryFile:
    """A memory file split into raw segments: ``opening + front + closing +
    body`` is exactly the decoded file text."""

    opening: str  # the first delimiter line with its line break (and a BOM, if any)
    front: str  # raw YAML between the delimiter lines
    closing: str  # the closing delimiter line with its line break
    body: str  # everything after the closing line
    metadata: dict[str, Any]

    @property
    def text(self) -> str:
        return self.opening + self.front + self.closing + self.body

    @property
    def newline(self) -> str:
        return "\r\n" if self.opening.endswith("\r\n") else "\n"

    def to_bytes(self) -> bytes:
        return self.text.encode("utf-8")


class EntryFormatError(ValueError):
    """The text is not a well-formed memory entry; the message says why."""


def split_entry(text: str) -> EntryFile:
    """Split and parse an entry's text, keeping every byte (raises EntryFormatError)."""
    bom = _BOM if text.startswith(_BOM) else ""
    rest = text[len(bom) :]
    if not _HANDLER.detect(rest):
        raise EntryFormatError("no YAML front matter (the file must start with a '---' line)")
    opening_end = _line_end(rest, 0)
    assert _HANDLER.FM_BOUNDARY is not None
    closing = _HANDLER.FM_BOUNDARY.search(rest, opening_end)
    if closing is None:
        raise EntryFormatError("front matter is not closed by a '---' line")
    closing_end = _line_end(rest, closing.start())
    front = rest[opening_end : closing.start()]
    return EntryFile(
        opening=bom + rest[:opening_end],
        front=front,
        closing=rest[closing.start() : closing_end],
        body=rest[closing_end:],
        metadata=load_front(front, first_line=2),
    )


def _shared_container(data: Any) -> bool:
    """Whether a list or mapping occurs twice in ``data``: what a YAML alias
    (``*name``) makes. Nine lists of nine aliases nested ten deep are 3.5
    billion values for anything that walks or compares them (an edit compared
    two such parses for minutes); each container is visited once here."""
    seen: set[int] = set()
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, dict | list):
            if id(value) in seen:
                return True
            seen.add(id(value))
            stack.extend(value.values() if isinstance(value, dict) else value)
    return False


def load_front(front: str, *, first_line: int = 1) -> dict[str, Any]:
    """Parse front-matter YAML into a mapping (empty front matter gives {}).
    ``first_line`` is the file line the YAML starts on, so an error names the
    file's line and column, not the snippet's. The few ``key: value`` lines
    most entries have are read without the YAML parser (same values; see
    :mod:`bonsai.services.memory.simple_front`)."""
    simple = parse_simple_front(front)
    if simple is not None:
        return simple
    try:
        data = _HANDLER.load(front)
    except yaml.YAMLError as exc:
        raise EntryFormatError(
            f"invalid YAML front matter{_where(exc, first_line)}: {_yaml_problem(exc)}"
        ) from exc
    except ValueError as exc:  # a value YAML recognises but cannot build: 2026-13-01
        raise EntryFormatError(
            f"invalid YAML front matter{_bad_date_line(front, first_line)}: {exc}"
        ) from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise EntryFormatError("front matter must be a mapping of keys to values")
    if _shared_container(data):
        raise EntryFormatError("YAML aliases (*name) are not allowed in front matter")
    return data


_DATE_VALUE = re.compile(r"[^:#]*:\s+['\"]?([0-9]{4}-[0-9]{1,2}-[0-9]{1,2})\b")


def _bad_date_line(front: str, first_line: int) -> str:
    """`` at line N`` for the first line holding a date that does not exist."""
    for number, line in enumerate(front.splitlines()):
        found = _DATE_VALUE.match(line)
        if found is None:
            continue
        year, month, day = (int(part) for part in found[1].split("-"))
        try:
            date(year, month, day)
        except ValueError:
            return f" at line {first_line + number}"
    return ""


def _line_end(text: str, start: int) -> int:
    newline = text.find("\n", start)
    return len(text) if newline < 0 else newline + 1


def _where(exc: yaml.YAMLError, first_line: int) -> str:
    mark = getattr(exc, "problem_mark", None)
    if mark is None:
        return ""
    return f" at line {first_line + mark.line}, column {mark.column + 1}"


def _yaml_problem(exc: yaml.YAMLError) -> str:
    problem = getattr(exc, "problem", None)
    return str(problem) if problem else _first_line(str(exc))


def _first_line(message: str) -> str:
    return message.strip().splitlines()[0] if message.strip() else "parse error"


def read_entry(path: Path, tier: Tier) -> tuple[EntryFile, MemoryEntry]:
    """Read and validate one entry file (raises EntryFormatError with the reason)."""
    problem = name_problem(path.stem)
    if problem:
        raise EntryFormatError(f"file name is not a valid entry name: {problem}")
    with path.open("rb") as file:
        raw = file.read(FILE_MAX_BYTES + 1)  # never more: a hostile file may be huge
        if len(raw) > FILE_MAX_BYTES:
            size = os.fstat(file.fileno()).st_size
            raise EntryFormatError(f"file is {size} bytes (limit {FILE_MAX_BYTES})")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EntryFormatError(f"not UTF-8 text (byte {exc.start})") from exc
    parsed = split_entry(text)
    entry = entry_from_file(parsed, path=path, tier=tier, digest=content_hash(raw))
    return parsed, entry


def entry_from_file(parsed: EntryFile, *, path: Path, tier: Tier, digest: str) -> MemoryEntry:
    meta = parsed.metadata
    body = normalise_body(parsed.body)
    body_bytes = len(body.encode("utf-8"))
    if body_bytes > BODY_MAX_BYTES:
        raise EntryFormatError(f"body is {body_bytes} bytes (limit {BODY_MAX_BYTES})")
    description = _text_field(meta, "description")
    if description is None:
        description = derive_description_from_body(body)
    if len(description) > DESCRIPTION_MAX:
        raise EntryFormatError(
            f"description is {len(description)} characters (limit {DESCRIPTION_MAX})"
        )
    return MemoryEntry(
        name=path.stem,
        tier=tier,
        type=_entry_type(meta, tier),
        description=description,
        body=body,
        created=_date_field(meta, "created"),
        updated=_date_field(meta, "updated"),
        enabled=_enabled_field(meta),
        path=path,
        digest=digest,
    )


def normalise_body(raw_body: str) -> str:
    """The body as text: LF line breaks, no leading or trailing blank lines."""
    return raw_body.replace("\r\n", "\n").strip("\n")


def derive_description_from_body(body: str) -> str:
    first = next((line.strip() for line in body.splitlines() if line.strip()), "")
    return clip_text(first.lstrip("#").strip(), DESCRIPTION_MAX)


def clip_text(text: str, limit: int) -> str:
    """Collapse whitespace and cut at a word boundary, marking the cut with '…'."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0] or text[: limit - 1]
    return cut.rstrip(" ,;:.") + "…"


def _text_field(meta: dict[str, Any], key: str) -> str | None:
    value = meta.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise EntryFormatError(f"'{key}' must be text, not {type(value).__name__}")
    if "\n" in value.strip():
        raise EntryFormatError(f"'{key}' must be a single line")
    return value.strip()


def _entry_type(meta: dict[str, Any], tier: Tier) -> EntryType:
    value = meta.get("type")
    if value is None:
        return "project" if tier == "project" else "user"
    if value not in ENTRY_TYPES:
        raise EntryFormatError(f"'type' must be one of {', '.join(ENTRY_TYPES)}, not {value!r}")
    return value  # type: ignore[no-any-return]


def _date_field(meta: dict[str, Any], key: str) -> date | None:
    value = meta.get(key)
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            return None
    return None


def _enabled_field(meta: dict[str, Any]) -> bool:
    value = meta.get("enabled", True)
    if not isinstance(value, bool):
        raise EntryFormatError("'enabled' must be true or false")
    return value


__all__ = [
    "BODY_MAX_BYTES",
    "DESCRIPTION_MAX",
    "ENTRY_TYPES",
    "NAME_MAX",
    "TIERS",
    "EntryFile",
    "EntryFormatError",
    "EntryType",
    "MemoryEntry",
    "MemoryIssue",
    "Tier",
    "read_entry",
    "split_entry",
]
