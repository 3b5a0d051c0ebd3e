"""Score-aware fusion of the BM25 and embedding lanes (pure core)."""

from __future__ import annotations

from bonsai.core.retrieval.documents import Lane
from bonsai.core.retrieval.fusion import FusionParams, fuse, lane_only
from bonsai.core.retrieval.priors import PriorParams, memory_prior

PARAMS = FusionParams()


def _semantic(hits: list[tuple[str, float]], background: float = 0.1, spread: float = 0.05) -> Lane:
    return Lane(hits=tuple(hits), background=background, spread=spread)


def test_bm25_leads_and_a_confident_embedding_breaks_a_near_tie() -> None:
    lexical = Lane(hits=(("a", 10.0), ("b", 9.5), ("c", 3.0)))
    semantic = _semantic([("b", 0.45), ("a", 0.12), ("c", 0.11)])  # b is 7σ above background
    ranked = [h.id for h in fuse(lexical, semantic, PARAMS)]
    assert ranked == ["b", "a", "c"]


def test_embedding_cannot_outvote_a_clearly_better_keyword_match() -> None:
    lexical = Lane(hits=(("a", 10.0), ("b", 4.0)))
    semantic = _semantic([("b", 0.60), ("a", 0.10)])
    assert [h.id for h in fuse(lexical, semantic, PARAMS)] == ["a", "b"]


def test_a_paraphrase_without_shared_words_is_rescued_by_the_embedding_lane() -> None:
    lexical = Lane(hits=(("weak", 1.0),))
    semantic = _semantic([("para", 0.50), ("weak", 0.10)])
    hits = fuse(lexical, semantic, PARAMS)
    assert [h.id for h in hits] == ["weak", "para"]
    para = hits[1]
    assert para.lanes.bm25 is None and para.lanes.embedding == 0.50
    assert para.score > 0


def test_membership_gate_drops_documents_in_neither_lane() -> None:
    lexical = Lane(hits=(("a", 2.0),))
    # "noise" is barely above the background: below the relative floor (z < 2)
    semantic = _semantic([("noise", 0.17), ("a", 0.12)], background=0.10, spread=0.05)
    assert [h.id for h in fuse(lexical, semantic, PARAMS)] == ["a"]


def test_absolute_cosine_floor_applies_even_when_z_is_high() -> None:
    semantic = _semantic([("x", 0.30)], background=0.0, spread=0.01)
    assert fuse(Lane(), semantic, PARAMS) == []
    assert [h.id for h in fuse(Lane(), semantic, FusionParams(cosine_floor=0.2))] == ["x"]


def test_small_spread_is_floored_so_tiny_collections_do_not_inflate_z() -> None:
    semantic = _semantic([("x", 0.40), ("y", 0.39)], background=0.395, spread=0.005)
    assert fuse(Lane(), semantic, PARAMS) == []


def test_priors_only_break_ties() -> None:
    lexical = Lane(hits=(("user-entry", 5.0), ("project-entry", 5.0), ("other", 4.0)))
    priors = {"project-entry": 0.02, "other": 0.02}  # the largest possible prior
    ranked = [h.id for h in fuse(lexical, None, PARAMS, priors)]
    assert ranked == ["project-entry", "user-entry", "other"]


def test_fusion_is_deterministic_with_ties_broken_by_id() -> None:
    lexical = Lane(hits=(("b", 1.0), ("a", 1.0), ("c", 1.0)))
    assert [h.id for h in fuse(lexical, None, PARAMS)] == ["a", "b", "c"]


def test_lane_only_baselines_rank_by_raw_score() -> None:
    semantic = _semantic([("x", 0.2), ("y", 0.9)])
    assert [h.id for h in lane_only(semantic, PARAMS, embedding=True)] == ["y", "x"]
    assert lane_only(None, PARAMS, embedding=True) == []


def test_memory_prior_prefers_project_tier_and_fresh_entries() -> None:
    from datetime import date

    params = PriorParams()
    today = date(2026, 7, 1)
    fresh_project = memory_prior({"tier": "project", "updated": "2026-07-01"}, today, params)
    old_user = memory_prior({"tier": "user", "updated": "2025-07-01"}, today, params)
    assert fresh_project == 0.02
    assert 0 < old_user < 0.001
    assert memory_prior({"tier": "user", "updated": "not a date"}, today, params) == 0.0
