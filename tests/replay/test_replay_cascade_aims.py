"""The default preset against the cascade's aims (issue 23), on both recorded corpora.

A deterministic, evenly spread subset keeps the suite's runtime modest: every
recording of the quick corpus and every 10th of the 150 mini-swe-agent runs
(the bench replays more: ``bench/cascade.py --every 1``). Skipped where a corpus
is absent. Aims the default does not reach yet are held at their measured level
(named ``..._held``) so a regression fails; docs/context.md gives the figures.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

import pytest

from bonsai.services.replay import build_config
from bonsai.services.replay.corpus import Tally, load_sources, measure
from bonsai.services.replay.loss import Loss

ROOT = Path(__file__).resolve().parents[2]
QUICK = Path(os.environ.get("BONSAI_TRAJECTORIES", ROOT.parent / "shared" / "trajectories"))
LARGE = Path(
    os.environ.get("BONSAI_CORPUS", ROOT.parent / "shared" / "corpus" / "mini-swe-agent-gemini")
)
EVERY = 10

pytestmark = pytest.mark.skipif(
    not (QUICK.is_dir() and LARGE.is_dir()),
    reason=f"needs both corpora: {QUICK} and {LARGE} (set BONSAI_TRAJECTORIES, BONSAI_CORPUS)",
)


@cache
def _run(
    window: int, policy: str = "managed", preset: str | None = "balanced"
) -> tuple[Tally, Loss]:
    sources = load_sources([QUICK, LARGE], EVERY)
    return measure(sources, build_config(window=window, policy=policy, preset=preset))  # type: ignore[arg-type]


def test_at_32k_every_call_fits_the_usable_window() -> None:
    tally, _ = _run(32_000)
    assert tally.turns > 500 and tally.fit() == 1.0


def test_at_32k_size_cost_and_loss_are_held() -> None:
    tally, loss = _run(32_000)
    # aims: managed ≤ 0.40, OpenAI-style ≤ 0.60, Anthropic-style ≤ 0.65, loss ≤ 2%,
    # ≥ 90% recoverable; measured on this subset: 0.430, 0.644, 0.671, 2.4%, 82%
    assert tally.managed <= 0.44 * tally.raw
    assert tally.family_cost_ratio("openai") <= 0.66
    assert tally.family_cost_ratio("anthropic") <= 0.69
    assert loss.needed_share() <= 0.03
    assert loss.recoverable_share() >= 0.78


def test_at_32k_the_default_is_cheaper_than_the_published_policies() -> None:
    ours, _ = _run(32_000)
    for policy in ("naive", "prune"):
        theirs, _ = _run(32_000, policy, None)
        for family in ("openai", "anthropic", "deepseek"):
            assert ours.family_cost_ratio(family) < theirs.family_cost_ratio(family), (
                policy,
                family,
            )


def test_at_128k_no_call_is_over_the_window_and_rewrites_are_rare() -> None:
    tally, _ = _run(128_000)
    assert tally.fit() == 1.0
    assert tally.rewrites_per_100() < 3
    assert tally.family_cost_ratio("openai") < 1.0  # aim: ≤ 0.85
