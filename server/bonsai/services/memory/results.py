"""Result types of the memory service (what CLI, daemon and tools return)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from bonsai.core.retrieval.documents import LaneScores
from bonsai.services.memory.entry import MemoryEntry, MemoryIssue, Tier


class SearchHitView(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    tier: Tier
    score: float
    lanes: LaneScores


class SearchResult(BaseModel):
    """``bonsai memory search --json`` prints exactly this."""

    results: list[SearchHitView]
    embeddings: str  # "on" or "off: <reason>"


class MemoryStatus(BaseModel):
    enabled: bool
    user_dir: Path
    project_dir: Path | None
    entries: int
    project_entries: int
    user_entries: int
    disabled: list[str]
    shadowed: list[str]
    issues: list[MemoryIssue]
    embeddings: str
    model_dir: Path
    index_path: Path
    index_line: str
    gitignore_advisory: str | None


class MemoryListing(BaseModel):
    """``bonsai memory list --json`` prints exactly this: every valid entry
    (project wins a name clash) and every file that could not be read."""

    entries: list[MemoryEntry]
    issues: list[MemoryIssue]
