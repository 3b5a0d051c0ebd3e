"""Generic hybrid retrieval over SQLite (FTS5 + vectors), shared by memory
and session-history recall."""

from bonsai.core.retrieval.documents import Doc, Hit, LaneScores
from bonsai.services.retrieval.db import IndexSchemaError, open_index
from bonsai.services.retrieval.embedder import Embedder
from bonsai.services.retrieval.index import HybridIndex, SyncReport

__all__ = [
    "Doc",
    "Embedder",
    "Hit",
    "HybridIndex",
    "IndexSchemaError",
    "LaneScores",
    "SyncReport",
    "open_index",
]
