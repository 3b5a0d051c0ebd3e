"""What the repository map service returns (pydantic: it crosses the service
boundary): the map, its files and shown tags, and a build's counts. Imported
through ``records`` by callers; kept apart so that a parse worker, which needs
only the records, never imports pydantic."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


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
    (touched but unchanged), parsed, shared (tags of the same bytes indexed in
    another checkout), removed, and skipped (binary/too large)."""

    files: int = 0
    trusted: int = 0
    hashed: int = 0
    parsed: int = 0
    shared: int = 0  # not parsed: the same bytes' tags came from another checkout
    removed: int = 0
    skipped: int = 0
    elapsed_ms: float = 0.0
