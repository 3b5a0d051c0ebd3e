"""Pure data types of the retrieval engine (documents, hits, lane scores)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, JsonValue


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Doc(_Frozen):
    """One searchable document: a stable id, its text and free-form metadata.

    ``meta`` is stored as JSON beside the document and handed back with each
    hit, so callers can keep tier, timestamps or a message id there."""

    id: str = Field(min_length=1)
    text: str
    meta: dict[str, JsonValue] = Field(default_factory=dict)


class LaneScores(_Frozen):
    """Raw per-lane evidence for a hit: the (positive) BM25 score and the cosine
    similarity. ``None`` means the document did not surface in that lane."""

    bm25: float | None = None
    embedding: float | None = None


class FusedHit(_Frozen):
    """A document after fusion, before metadata is attached."""

    id: str
    score: float
    lanes: LaneScores


class Hit(_Frozen):
    """A search result: fused score, the lane evidence and the document's metadata.

    ``via`` names the hit the second hop reached it from (the entry it shares
    an entity with), ``None`` for a hit ranked on its own evidence."""

    id: str
    score: float
    lanes: LaneScores
    meta: dict[str, JsonValue] = Field(default_factory=dict)
    via: str | None = None


class Lane(_Frozen):
    """The candidates of one retrieval lane, best first, as ``(id, score)``.

    ``background`` and ``spread`` describe the scores of the whole collection
    for this query (mean and standard deviation); the embedding lane uses them
    to tell a confident match from the usual level of unrelated documents."""

    hits: tuple[tuple[str, float], ...] = ()
    background: float = 0.0
    spread: float = 0.0
