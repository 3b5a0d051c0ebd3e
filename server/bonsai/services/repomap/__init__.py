"""The repository map: tree-sitter tags -> reference graph -> personalized
PageRank -> text fitted to a token budget, kept current as files change.

Entry point: :class:`RepoMapService`. See ``docs/repomap.md``.

The names below are imported on first use, so that a parse worker, which needs
only the tagging modules, never pays for the service (numpy, ranking, SQLite).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bonsai.services.repomap.records import (
        BuildStats,
        Definition,
        FileTags,
        MapFile,
        RepoMap,
    )
    from bonsai.services.repomap.service import RepoMapService

_WHERE = {
    "BuildStats": "records",
    "Definition": "records",
    "FileTags": "records",
    "MapFile": "records",
    "RepoMap": "records",
    "RepoMapService": "service",
}
__all__ = ["BuildStats", "Definition", "FileTags", "MapFile", "RepoMap", "RepoMapService"]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
