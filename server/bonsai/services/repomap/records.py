"""Data of the repository map.

Hot, high-volume records (a large repository has ~10^5 definitions and the warm
start must load them in a fraction of a second) are ``NamedTuple``s; what crosses
the service boundary (``RepoMap``, ``MapFile``) is pydantic, in ``results.py``,
and re-exported here on first use: a parse worker imports this module for its
records and never pays for pydantic.
"""

from __future__ import annotations

import importlib
import json
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from bonsai.services.repomap.results import BuildStats, MapFile, MapTagOut, RepoMap

_RESULTS = frozenset({"BuildStats", "MapFile", "MapTagOut", "RepoMap"})
__all__ = [
    "BuildStats",
    "Definition",
    "FileTags",
    "MapFile",
    "MapTagOut",
    "RepoMap",
    "decode_tags",
    "encode_tags",
]


def __getattr__(name: str) -> Any:
    if name not in _RESULTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module("bonsai.services.repomap.results"), name)


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
