"""The embedding lane's weight follows how far its best cosine stands above
the next ones (pure core, constructed lanes whose right answer is known)."""

from __future__ import annotations

from bonsai.core.retrieval.documents import Lane
from bonsai.core.retrieval.fusion import FusionParams, fuse, lane_scale

CONSTANT = FusionParams()  # session recall's fusion: the weight does not move
GAP = FusionParams(embedding_gap_rank=10, embedding_gap_floor=1.0, embedding_gap_full=4.0)


def _plateau(best: str) -> Lane:
    """``best`` on top of twenty near neighbours, all far above the background
    (every one a confident member): a large store of similar notes."""
    hits = [(best, 0.600)] + [(f"n{i:02d}", 0.598 - 0.001 * i) for i in range(20)]
    return Lane(hits=tuple(hits), background=0.20, spread=0.05)


def _standout(best: str) -> Lane:
    """``best`` far above everything else: the lane knows which one it means."""
    hits = [(best, 0.62)] + [(f"n{i:02d}", 0.40 - 0.001 * i) for i in range(20)]
    return Lane(hits=tuple(hits), background=0.20, spread=0.05)


def test_the_scale_ramps_with_the_gap_and_is_one_when_off() -> None:
    assert lane_scale(_plateau("b"), CONSTANT) == 1.0
    assert lane_scale(_plateau("b"), GAP) == 0.0  # gap 0.2 spreads: below the floor
    assert lane_scale(_standout("b"), GAP) == 1.0  # gap 4.4 spreads
    middle = Lane(hits=(("b", 0.50), *((f"n{i}", 0.375) for i in range(9))), spread=0.05)
    assert lane_scale(middle, GAP) == 0.5  # gap 2.5: half-way from 1 to 4
    assert lane_scale(None, GAP) == 1.0 and lane_scale(Lane(), GAP) == 1.0


def test_a_plateau_does_not_reorder_the_keyword_matches() -> None:
    lexical = Lane(hits=(("a", 10.0), ("b", 8.5)))
    # with a constant weight the plateau's top member outranks the better keyword match
    assert [h.id for h in fuse(lexical, _plateau("b"), CONSTANT)][:2] == ["b", "a"]
    assert [h.id for h in fuse(lexical, _plateau("b"), GAP)][:2] == ["a", "b"]


def test_a_standout_paraphrase_keeps_the_lane_s_full_weight() -> None:
    lexical = Lane(hits=(("a", 10.0), ("weak", 2.0)))
    constant = {h.id: h.score for h in fuse(lexical, _standout("para"), CONSTANT)}
    gapped = {h.id: h.score for h in fuse(lexical, _standout("para"), GAP)}
    assert gapped["para"] == constant["para"] > gapped["weak"]
