"""Minimal edits of an entry's front matter and body.

Only what changed is re-serialised: a changed key has its one line rewritten
in place (its trailing ``# comment`` and the file's line breaks are kept), a
new key is appended before the closing delimiter, a removed key loses its
line. Every edit is verified by parsing the result again; when the in-place
edit cannot express the change (for instance a multi-line YAML value), the
front matter is re-exported whole with the library's YAML dumper instead —
correct, but without comments.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml
from frontmatter.default_handlers import YAMLHandler

from bonsai.services.memory.entry import EntryFile, EntryFormatError, load_front

_HANDLER = YAMLHandler()
_CANONICAL_ORDER = ("name", "description", "type", "created", "updated", "enabled")


def scalar_line(key: str, value: Any) -> str:
    """``key: value`` as one YAML line (quoted as YAML requires)."""
    dumped = yaml.safe_dump(
        {key: value}, default_flow_style=False, allow_unicode=True, width=1_000_000
    )
    line = dumped.rstrip("\n")
    if "\n" in line:
        raise ValueError(f"value of {key!r} does not fit on one line")
    return line


def render_new(fields: Mapping[str, Any], body: str, newline: str = "\n") -> EntryFile:
    """A fresh entry in canonical key order, body followed by one line break."""
    keys = [k for k in _CANONICAL_ORDER if k in fields] + sorted(
        k for k in fields if k not in _CANONICAL_ORDER
    )
    front = "".join(scalar_line(k, fields[k]) + newline for k in keys)
    text_body = body.replace("\r\n", "\n").strip("\n")
    raw_body = (text_body + "\n").replace("\n", newline) if text_body else ""
    return EntryFile(
        opening="---" + newline,
        front=front,
        closing="---" + newline,
        body=raw_body,
        metadata=load_front(front),
    )


def edit_entry(
    entry: EntryFile,
    *,
    set_keys: Mapping[str, Any] | None = None,
    remove_keys: tuple[str, ...] = (),
    body: str | None = None,
) -> EntryFile:
    """Apply changes with the smallest textual edit; unchanged input gives the
    identical :class:`EntryFile` back."""
    wanted = dict(entry.metadata)
    changes = {k: v for k, v in (set_keys or {}).items() if entry.metadata.get(k, _MISSING) != v}
    wanted.update(changes)
    removals = tuple(k for k in remove_keys if k in entry.metadata)
    for key in removals:
        wanted.pop(key)
    front = entry.front
    if changes or removals:
        front = _edit_front(front, changes, removals, entry.newline)
        if _safe_load(front) != wanted:
            front = _export(wanted, entry.newline)
    new_body = entry.body if body is None else _raw_body(body, entry)
    if front == entry.front and new_body == entry.body:
        return entry
    return EntryFile(entry.opening, front, entry.closing, new_body, load_front(front))


_MISSING = object()


def _edit_front(front: str, changes: Mapping[str, Any], removals: tuple[str, ...], nl: str) -> str:
    for key, value in changes.items():
        front = _set_line(front, key, value, nl)
    for key in removals:
        front = _key_pattern(key).sub("", front, count=1)
    return front


def _key_pattern(key: str) -> re.Pattern[str]:
    return re.compile(
        r"^"
        + re.escape(key)
        + r"[ \t]*:(?P<value>[^\r\n]*?)(?P<comment>[ \t]+#[^\r\n]*)?(?:\r?\n|$)",
        re.MULTILINE,
    )


def _set_line(front: str, key: str, value: Any, nl: str) -> str:
    line = scalar_line(key, value)
    match = _key_pattern(key).search(front)
    if match is None:
        if front and not front.endswith("\n"):
            front += nl
        return front + line + nl
    quoted = match.group("value").strip().startswith(("'", '"'))
    comment = "" if quoted else (match.group("comment") or "")
    whole = match.group(0)
    ending = whole[len(whole.rstrip("\r\n")) :]
    return front[: match.start()] + line + comment + ending + front[match.end() :]


def _safe_load(front: str) -> dict[str, Any] | None:
    try:
        return load_front(front)
    except EntryFormatError:
        return None


def _export(metadata: Mapping[str, Any], nl: str) -> str:
    text = _HANDLER.export(dict(metadata), sort_keys=False)
    return "".join(line + nl for line in text.splitlines()) if text.strip() != "{}" else ""


def _raw_body(body: str, entry: EntryFile) -> str:
    text = body.replace("\r\n", "\n").strip("\n")
    return (text + "\n").replace("\n", entry.newline) if text else ""
