"""Data of the repository map.

Hot, high-volume records (a large repository has ~10^5 definitions and the warm
start must load them in a fraction of a second) are ``NamedTuple``s; what crosses
the service boundary (``RepoMap``, ``MapFile``) is pydantic.
"""

from __future__ import annotations

import json
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, Field


class Definition(NamedTuple):
    """A definition found by the tags query. ``line`` is 1-based; ``depth`` is the
    number of enclosing definitions (a method in a class has depth 1)."""

    name: str
    kind: str
    line: int
    signature: str
    depth: int = 0


class FileTags(NamedTuple):
    """Everything the map knows about one file. ``references`` maps identifier to
    use count, in name order (treat it as read-only); ``language`` is None for
    files listed by path only."""

    path: str
    language: str | None
    definitions: tuple[Definition, ...] = ()
    references: dict[str, int] = {}  # noqa: RUF012 - never mutated
    words: tuple[str, ...] = ()  # distinct stemmed words of the text (words.py)


def encode_tags(tags: FileTags) -> str:
    """Compact JSON for the cache (decoding it is one C call)."""
    return json.dumps(
        [tags.language, [list(d) for d in tags.definitions], tags.references, tags.words],
        ensure_ascii=False,
        separators=(",", ":"),
    )


def decode_tags(path: str, data: str) -> FileTags:
    language, defs, refs, *rest = json.loads(data)
    return FileTags(
        path,
        language,
        tuple(map(Definition._make, defs)),
        refs,
        tuple(rest[0]) if rest else (),
    )


class MapTagOut(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    kind: str
    line: int
    signature: str


class MapFile(BaseModel):
    """A file shown in the map, with its normalised rank and shown definitions."""

    model_config = ConfigDict(frozen=True)

    path: str
    rank: float
    tags: list[MapTagOut] = Field(default_factory=list)


class RepoMap(BaseModel):
    """Result of ``RepoMapService.get``. ``changed``/``reason`` explain to the
    ledger whether the text differs from the previous call and why."""

    model_config = ConfigDict(frozen=True)

    text: str
    files: list[MapFile]
    tokens: int
    built_ms: float
    cached: bool
    changed: bool
    reason: str


class BuildStats(BaseModel):
    """What a build or update did: how many files were trusted by stat, hashed
    (touched but unchanged), parsed, removed, and skipped (binary/too large)."""

    files: int = 0
    trusted: int = 0
    hashed: int = 0
    parsed: int = 0
    removed: int = 0
    skipped: int = 0
    elapsed_ms: float = 0.0
