"""summarize(): the aggregate figures of a replay, and the report's JSON shape."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from bonsai.core.replay.report import (
    ModelPrice,
    ReplayReport,
    ReplayTurn,
    percentile,
    report_json,
    summarize,
)

REPORT_FIELDS = {
    "turns",
    "rawInputTokens",
    "managedInputTokens",
    "cachedInputTokens",
    "savedFraction",
    "cacheHitFraction",
    "costRatio",
    "fitFraction",
    "rewrites",
    "peakContextTokens",
    "window",
    "usableWindow",
    "pipelineMsP50",
    "pipelineMsP95",
    "sessionId",
    "events",
    "perTurn",
    "timing",
}
TURN_FIELDS = {
    "step",
    "savedTokens",
    "rawInputTokens",
    "managedInputTokens",
    "cachedInputTokens",
    "fits",
    "rawFits",
    "events",
    "pipelineMs",
}


def turn(step: int, raw: int, managed: int, cached: int, **kw: object) -> ReplayTurn:
    fields: dict[str, object] = {"fits": True, "raw_fits": True, "events": [], "pipeline_ms": 1.0}
    fields.update(kw)
    return ReplayTurn(
        step=step,
        raw_input_tokens=raw,
        managed_input_tokens=managed,
        cached_input_tokens=cached,
        **fields,  # type: ignore[arg-type]
    )


TURNS = [
    turn(0, 1_000, 1_000, 0, pipeline_ms=2.0),
    turn(1, 3_000, 2_000, 1_000, events=["stub: 2 reads"], pipeline_ms=4.0),
    turn(2, 6_000, 3_000, 2_000, raw_fits=False, events=["nudge"], pipeline_ms=6.0),
    turn(
        3, 10_000, 4_000, 3_000, fits=False, raw_fits=False, events=["compaction: tier 1", "stub"]
    ),
]
RAW_CACHED = [0, 1_000, 3_000, 6_000]


def make(**kw: object) -> ReplayReport:
    args: dict[str, object] = {
        "window": 12_000,
        "usable": 8_000,
        "cache_read_price": 0.1,
        "raw_cached": RAW_CACHED,
    }
    args.update(kw)
    return summarize(TURNS, **args)  # type: ignore[arg-type]


def test_token_sums_and_fractions() -> None:
    report = make()
    assert (report.turns, report.raw_input_tokens, report.managed_input_tokens) == (
        4,
        20_000,
        10_000,
    )
    assert report.cached_input_tokens == 6_000
    assert report.saved_fraction == pytest.approx(0.5)
    assert report.cache_hit_fraction == pytest.approx(0.6)
    assert report.fit_fraction == pytest.approx(0.75)
    assert report.peak_context_tokens == 4_000


def test_cost_ratio_prices_cached_tokens_on_both_sides() -> None:
    # managed: 4,000 uncached + 0.1 × 6,000 cached = 4,600
    # raw:    10,000 uncached + 0.1 × 10,000 cached = 11,000
    assert make().cost_ratio == pytest.approx(4_600 / 11_000)
    assert make(cache_read_price=1.0).cost_ratio == pytest.approx(0.5)


def test_rewrites_count_turns_with_a_history_rewrite_and_events_count_kinds() -> None:
    report = make()
    assert report.rewrites == 2  # turns 1 and 3; a nudge is not a rewrite
    assert report.events == {"compaction": 1, "nudge": 1, "stub": 2}
    assert make(rewrite_kinds=frozenset({"nudge"})).rewrites == 1


def test_pipeline_percentiles_are_nearest_rank() -> None:
    report = make()
    assert (report.pipeline_ms_p50, report.pipeline_ms_p95) == (2.0, 6.0)
    assert percentile([5.0, 1.0, 3.0], 50) == 3.0
    assert percentile([], 95) == 0.0


def test_priced_costs_use_the_model_prices() -> None:
    price = ModelPrice(model="gpt-4o", input_usd_per_mtok=2.5, cached_input_usd_per_mtok=1.25)
    priced = make(price=price).priced
    assert priced is not None
    assert priced.model == "gpt-4o"
    assert priced.raw_cost_usd == pytest.approx((10_000 * 2.5 + 10_000 * 1.25) / 1e6)
    assert priced.managed_cost_usd == pytest.approx((4_000 * 2.5 + 6_000 * 1.25) / 1e6)


def test_json_uses_exactly_the_documented_names() -> None:
    data = json.loads(report_json(make(session_id="s-1")))
    assert set(data) == REPORT_FIELDS
    assert set(data["perTurn"][0]) == TURN_FIELDS
    assert data["sessionId"] == "s-1"
    price = ModelPrice(model="m", input_usd_per_mtok=1, cached_input_usd_per_mtok=0.1)
    priced = json.loads(report_json(make(price=price)))["priced"]
    assert set(priced) == {"model", "rawCostUsd", "managedCostUsd"}


def test_json_round_trips_and_is_byte_stable() -> None:
    text = report_json(make())
    assert ReplayReport.model_validate_json(text) == make()
    assert report_json(ReplayReport.model_validate_json(text)) == text


def test_empty_replay_has_neutral_figures() -> None:
    report = summarize([], window=100, usable=80, cache_read_price=0.1, raw_cached=[])
    assert (report.turns, report.saved_fraction, report.cost_ratio, report.fit_fraction) == (
        0,
        0.0,
        1.0,
        1.0,
    )


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"raw_cached": [0, 0]}, "raw_cached has 2 values for 4 turns"),
        ({"raw_cached": [0, 0, 0, 20_000]}, "turn 3: raw cached prefix 20000"),
        ({"usable": 20_000}, "usable window 20000"),
        ({"cache_read_price": 1.5}, "cache_read_price 1.5"),
    ],
)
def test_inconsistent_inputs_are_rejected(kw: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make(**kw)


def test_cached_above_managed_is_invalid() -> None:
    with pytest.raises(ValidationError, match="cachedInputTokens"):
        turn(0, 10, 5, 6)
