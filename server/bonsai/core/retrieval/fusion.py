"""Score-aware fusion of the BM25 and embedding lanes.

Equal-weight reciprocal-rank fusion lets a weak static-embedding lane push
its (often generic) neighbours above good keyword matches, and an absolute
cosine floor such as 0.35 removes almost nothing. bonsai instead fuses
*normalised scores* with the keyword lane in charge:

``score = bm25 / best_bm25 + embedding_weight · confidence(z) + rank_bonus / (1 + r) + prior``

* ``bm25 / best_bm25`` is 1.0 for the best keyword match of the query and
  falls off with BM25, 0 for documents without a keyword match.
* ``z = (cosine − mean) / max(spread, min_spread)`` measures how far a
  document's cosine stands above the query's background level (mean and
  standard deviation over the whole collection). A document joins the
  embedding lane only when ``z ≥ z_member`` (the relative floor) and its
  cosine clears ``cosine_floor`` (the absolute floor).
* ``confidence(z)`` ramps linearly from 0 at ``z_member`` to 1 at ``z_full``.
* ``r`` is the document's rank among the embedding lane's members (0 for the
  best); the small ``rank_bonus`` lets the lane's own ordering count, which a
  static model gets right more often than its raw cosine gaps suggest.
* Together the embedding terms add at most 0.4: enough to break ties among
  comparable keyword matches and to rescue a paraphrase with no shared word,
  not enough to outvote a clearly better keyword match.
* Membership is the gate: a document in neither lane is never returned.

Ties are broken by document id so identical inputs give identical output.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

from bonsai.core.retrieval.documents import FusedHit, Lane, LaneScores


class FusionParams(BaseModel):
    """Knobs of :func:`fuse`; the defaults were chosen on the labelled set in
    ``bench/data`` (see docs/memory.md for the figures)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    candidate_depth: int = Field(50, ge=1, description="candidates taken from each lane")
    bm25_weight: float = Field(1.0, ge=0.0)
    embedding_weight: float = Field(0.3, ge=0.0)
    rank_bonus: float = Field(0.1, ge=0.0, description="bonus / (1 + rank) for lane members")
    z_member: float = Field(2.0, description="relative floor, in standard deviations")
    z_full: float = Field(5.0, description="z at which the embedding lane counts fully")
    min_spread: float = Field(0.05, gt=0.0, description="smallest spread used for z")
    cosine_floor: float = Field(0.35, ge=-1.0, le=1.0, description="absolute cosine floor")
    part_weight: float = Field(
        0.5, ge=0.0, description="bonus / (1 + rank) in a lane of one clause of the query"
    )
    feedback_weight: float = Field(
        0.8,
        ge=0.0,
        description="second hop: a linked entry that adds no question term gets this times "
        "its source's score (one that does sits just below its source); 0 turns the hop off",
    )
    feedback_docs: int = Field(3, ge=0, description="top hits whose entities are followed")
    feedback_max: int = Field(2, ge=0, description="linked entries lifted at most per query")
    link_df: float = Field(
        0.02, gt=0.0, le=1.0, description="entity words in more of the documents are not followed"
    )
    feedback_nomatch: bool = Field(
        True, description="lift a linked entry that matches no question term (at factor²)"
    )
    link_df_min: int = Field(50, ge=1, description="... unless in at most this many documents")
    hop_relations: bool = Field(
        True,
        description="second hop: a linked entry stating a relation the question names "
        "(core/retrieval/relations.py) counts as matching it",
    )
    extra_depth: int = Field(10, ge=1, description="candidates taken from each extra lane")
    embedding_gap_rank: int = Field(
        0,
        ge=0,
        description="0: the embedding lane's weight is constant; k: its weight and rank bonus "
        "scale with how far the lane's best cosine stands above its k-th (see lane_scale)",
    )
    embedding_gap_floor: float = Field(
        0.0, ge=0.0, description="that gap, in spreads, at or below which the lane is silent"
    )
    embedding_gap_full: float = Field(1.0, gt=0.0, description="... and at which it counts fully")


def embedding_confidence(cosine: float, lane: Lane, params: FusionParams) -> float | None:
    """Confidence in [0, 1] of an embedding candidate, ``None`` when it falls
    below either floor (and so is not a member of the lane)."""
    spread = max(lane.spread, params.min_spread)
    z = (cosine - lane.background) / spread
    if z < params.z_member or cosine < params.cosine_floor:
        return None
    span = max(params.z_full - params.z_member, 1e-9)
    return min(1.0, (z - params.z_member) / span)


def lane_scale(lane: Lane | None, params: FusionParams) -> float:
    """How much the embedding lane counts for this query, in [0, 1].

    A static model's cosines carry a ranking only where the best candidates
    stand out from the next ones: the gap between the lane's best cosine and
    its ``embedding_gap_rank``-th, in units of the collection's spread, ramped
    from 0 at ``embedding_gap_floor`` to 1 at ``embedding_gap_full``. In a
    large store of similar notes the top of the lane is a plateau of near
    neighbours (gap about 0) and the lane falls silent; a paraphrase whose
    answer stands out keeps it. 1.0 when off."""
    if params.embedding_gap_rank <= 0 or lane is None or not lane.hits:
        return 1.0
    spread = max(lane.spread, params.min_spread)
    kth = lane.hits[min(params.embedding_gap_rank, len(lane.hits)) - 1][1]
    gap = (lane.hits[0][1] - kth) / spread
    span = max(params.embedding_gap_full - params.embedding_gap_floor, 1e-9)
    return max(0.0, min(1.0, (gap - params.embedding_gap_floor) / span))


def lane_members(lane: Lane | None, params: FusionParams) -> dict[str, tuple[float, float]]:
    """Embedding candidates that pass the floors: id -> (cosine, confidence)."""
    if lane is None:
        return {}
    members: dict[str, tuple[float, float]] = {}
    for doc_id, cosine in lane.hits[: params.candidate_depth]:
        confidence = embedding_confidence(cosine, lane, params)
        if confidence is not None:
            members[doc_id] = (cosine, confidence)
    return members


# id -> [fused score, raw BM25 or None, cosine or None]: the working form of a
# ranking (plain lists, so a query builds no model objects for its candidates)
Scores = dict[str, list[float | None]]


def fuse_scores(lexical: Lane, semantic: Lane | None, params: FusionParams) -> Scores:
    """The fused score and lane evidence of every candidate, without priors."""
    keyword = dict(lexical.hits[: params.candidate_depth])
    best = max(keyword.values(), default=0.0)
    members = lane_members(semantic, params)
    ranks = {d: r for r, d in enumerate(sorted(members, key=lambda d: (-members[d][0], d)))}
    scale = lane_scale(semantic, params)
    weight, bonus = params.embedding_weight * scale, params.rank_bonus * scale
    out: Scores = {}
    for doc_id in keyword.keys() | members.keys():
        raw_bm25 = keyword.get(doc_id)
        cosine, confidence = members.get(doc_id, (None, 0.0))
        lexical_part = raw_bm25 / best if raw_bm25 is not None and best > 0 else 0.0
        rank_part = bonus / (1 + ranks[doc_id]) if doc_id in ranks else 0.0
        score = params.bm25_weight * lexical_part + weight * confidence + rank_part
        out[doc_id] = [score, raw_bm25, cosine]
    return out


def ranked(scores: Scores) -> list[str]:
    """Ids best first (ties by id)."""
    return sorted(scores, key=lambda d: (-round(scores[d][0] or 0.0, 6), d))


def fused_hits(scores: Scores, ids: list[str]) -> list[FusedHit]:
    return [
        FusedHit(
            id=d,
            score=round(scores[d][0] or 0.0, 6),
            lanes=LaneScores(bm25=scores[d][1], embedding=scores[d][2]),
        )
        for d in ids
    ]


def fuse(
    lexical: Lane,
    semantic: Lane | None,
    params: FusionParams,
    priors: Mapping[str, float] | None = None,
) -> list[FusedHit]:
    """Fuse the two lanes into one ranking (best first); see the module notes."""
    scores = fuse_scores(lexical, semantic, params)
    for doc_id, prior in (priors or {}).items():
        if doc_id in scores:
            scores[doc_id][0] = (scores[doc_id][0] or 0.0) + prior
    return fused_hits(scores, ranked(scores))


def lane_bonus(
    scores: Scores,
    lanes: list[Lane],
    weight: float,
    depth: int,
    skip: frozenset[str] = frozenset(),
) -> None:
    """Add ``weight / (1 + rank)`` to each document for its best rank over
    ``lanes`` (clause lanes or the feedback lane; ``skip`` ids are not counted
    and do not take a rank); a document new to ``scores`` joins with the bonus
    alone and its BM25 score from that lane."""
    if weight <= 0:
        return
    best: dict[str, tuple[float, float]] = {}
    for lane in lanes:
        rank = 0
        for doc_id, raw in lane.hits:
            if doc_id in skip:
                continue
            if rank >= depth:
                break
            value = weight / (1 + rank)
            if doc_id not in best or best[doc_id][0] < value:
                best[doc_id] = (value, raw)
            rank += 1
    for doc_id, (value, raw) in best.items():
        if doc_id in scores:
            scores[doc_id][0] = (scores[doc_id][0] or 0.0) + value
        else:
            scores[doc_id] = [value, raw, None]


def lane_only(lane: Lane | None, params: FusionParams, *, embedding: bool) -> list[FusedHit]:
    """One lane on its own, ranked by its raw score and without floors: the
    strongest form of each single-lane baseline (benchmarks, diagnostics)."""
    if lane is None:
        return []
    hits = [
        FusedHit(
            id=doc_id,
            score=round(score, 6),
            lanes=LaneScores(embedding=score) if embedding else LaneScores(bm25=score),
        )
        for doc_id, score in lane.hits[: params.candidate_depth]
    ]
    hits.sort(key=lambda h: (-h.score, h.id))
    return hits


def add_lane_bonus(
    fused: list[FusedHit], lanes: list[Lane], weight: float, depth: int
) -> list[FusedHit]:
    """:func:`lane_bonus` on a list of hits (re-sorted, ties by id)."""
    scores: Scores = {h.id: [h.score, h.lanes.bm25, h.lanes.embedding] for h in fused}
    lane_bonus(scores, lanes, weight, depth)
    return fused_hits(scores, ranked(scores))
