"""Pure retrieval logic: query shaping, fusion of lanes, priors. No I/O."""

from bonsai.core.retrieval.documents import Doc, FusedHit, Hit, Lane, LaneScores
from bonsai.core.retrieval.fusion import FusionParams, fuse, lane_only
from bonsai.core.retrieval.priors import PriorParams, memory_prior
from bonsai.core.retrieval.query import fts_match_expression, indexable_text, quote_term
from bonsai.core.retrieval.text import (
    content_terms,
    jaccard,
    shared_stems,
    stem,
    stemmed_set,
    words,
)

__all__ = [
    "Doc",
    "FusedHit",
    "FusionParams",
    "Hit",
    "Lane",
    "LaneScores",
    "PriorParams",
    "content_terms",
    "fts_match_expression",
    "fuse",
    "indexable_text",
    "jaccard",
    "lane_only",
    "memory_prior",
    "quote_term",
    "shared_stems",
    "stem",
    "stemmed_set",
    "words",
]
