"""The default preset against the cascade's aims (issue 23), on both recorded corpora.

The aims are asserted as the issue states them (W = 32k, usable = W − 16k, the
replay's ``Budget.reserve`` is the 16,000-token ``output_reserve``): every call
fits, managed ≤ 0.40 of raw, cost ≤ 0.60 (OpenAI-style) and ≤ 0.65
(Anthropic-style) of raw, needed-later loss ≤ 2% of removed tokens, ≥ 90% of
needed spans recoverable; at 128k cost ≤ 0.85, no call over the window, fewer
than 3 rewrites per 100 calls. An aim the default does not reach yet is marked
``xfail(strict=True)`` with the figure measured: it fails the suite the day it
passes (so the mark comes off), and docs/context.md gives the figures.

The default is replayed on every run of both corpora, once per window and
process (cached: the tests share it); the comparison with the published
policies runs on an evenly spread subset (every recording of the quick corpus,
every 10th mini-swe-agent run) to keep the run time modest. Smaller subsets are
not used for the aims: their figures differ from the whole by more than the
margins (every 10th run: managed 0.423 against 0.39 for all). Skipped where a
corpus is absent.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

import pytest

from bonsai.services.replay import build_config
from bonsai.services.replay.corpus import Tally, load_sources, measure
from bonsai.services.replay.loss import Loss
from bonsai.services.replay.source import ReplaySource

ROOT = Path(__file__).resolve().parents[2]
QUICK = Path(os.environ.get("BONSAI_TRAJECTORIES", ROOT.parent / "shared" / "trajectories"))
LARGE = Path(
    os.environ.get("BONSAI_CORPUS", ROOT.parent / "shared" / "corpus" / "mini-swe-agent-gemini")
)
SUBSET = 10  # for the comparison with the published policies

pytestmark = [
    pytest.mark.skipif(
        not (QUICK.is_dir() and LARGE.is_dir()),
        reason=f"needs both corpora: {QUICK} and {LARGE} (set BONSAI_TRAJECTORIES, BONSAI_CORPUS)",
    ),
    pytest.mark.timeout(1200),  # the first test of a window replays the whole corpus
]


@cache
def _sources(every: int) -> tuple[ReplaySource, ...]:
    return tuple(load_sources([QUICK, LARGE], every))


@cache
def _run(
    window: int, policy: str = "managed", preset: str | None = "balanced", every: int = 1
) -> tuple[Tally, Loss]:
    config = build_config(window=window, policy=policy, preset=preset)  # type: ignore[arg-type]
    assert config.budget.usable == window - 16_000  # the aims' "usable = W − 16k"
    return measure(list(_sources(every)), config)


def test_at_32k_every_call_fits_the_usable_window() -> None:
    tally, _ = _run(32_000)
    assert tally.turns > 6000 and tally.fit() == 1.0


def test_at_32k_managed_input_is_at_most_40_percent_of_raw() -> None:
    tally, _ = _run(32_000)
    assert tally.managed <= 0.40 * tally.raw


def test_at_32k_cost_meets_the_openai_and_anthropic_aims() -> None:
    tally, _ = _run(32_000)
    assert tally.family_cost_ratio("openai") <= 0.60
    assert tally.family_cost_ratio("anthropic") <= 0.65


def test_at_32k_needed_later_loss_is_at_most_2_percent_of_removed() -> None:
    _, loss = _run(32_000)
    assert loss.removed_tokens > 0
    assert loss.needed_share() <= 0.02


def test_at_32k_nine_in_ten_needed_spans_come_back_in_one_recall() -> None:
    _, loss = _run(32_000)
    assert loss.needed_spans > 20
    assert loss.recoverable_share() >= 0.90


def test_at_32k_the_default_is_cheaper_than_the_published_policies() -> None:
    ours, _ = _run(32_000, every=SUBSET)
    for policy in ("naive", "prune"):
        theirs, _ = _run(32_000, policy, None, every=SUBSET)
        for family in ("openai", "anthropic", "deepseek"):
            assert ours.family_cost_ratio(family) < theirs.family_cost_ratio(family), (
                policy,
                family,
            )


def test_at_128k_no_call_is_over_the_window_and_rewrites_are_rare() -> None:
    tally, _ = _run(128_000)
    assert tally.fit() == 1.0
    assert tally.rewrites_per_100() < 3


def test_at_128k_cost_is_at_most_85_percent_of_raw() -> None:
    tally, _ = _run(128_000)
    assert tally.family_cost_ratio("openai") <= 0.85
