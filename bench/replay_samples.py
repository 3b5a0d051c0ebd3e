"""Replay every recording in a folder and print one row per run, plus totals.

Each row sets the managed pipeline (the chosen preset) beside the unmanaged
raw history of the same run: input tokens, saved fraction, cache-eligible
share, cost ratio (cache reads at 0.1 of normal input), share of calls that
fit, rewrites and pipeline time.

    .venv/bin/python bench/replay_samples.py [FOLDER] [--window 32000] [--preset balanced]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bonsai.core.replay.report import REWRITE_KINDS
from bonsai.services.replay.corpus import Tally, recordings, replay_recording
from bonsai.services.replay.setup import build_config

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_FOLDER = ROOT.parent / "shared" / "trajectories"
HEADER = (
    f"{'recording':<44} {'calls':>5} {'raw':>9} {'managed':>9} {'saved':>6} {'hit':>6} "
    f"{'cost':>6} {'fit':>6} {'raw fit':>7} {'rewr':>4} {'p95 ms':>7}"
)


def _row(name: str, tally: Tally, raw_fit: float, price: float) -> str:
    return (
        f"{name[:44]:<44} {tally.turns:>5} {tally.raw:>9,} {tally.managed:>9,} "
        f"{tally.saved():>6.1%} {tally.hit():>6.1%} {tally.cost_ratio(price):>6.3f} "
        f"{tally.fit():>6.1%} {raw_fit:>7.1%} {tally.rewrites:>4} {tally.p95():>7.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("folder", nargs="?", type=Path, default=DEFAULT_FOLDER)
    parser.add_argument("--window", type=int, default=32_000)
    parser.add_argument("--preset", choices=("keep", "balanced", "save"), default="balanced")
    parser.add_argument("--cache-read-price", type=float, default=0.1)
    args = parser.parse_args()
    config = build_config(
        window=args.window, preset=args.preset, cache_read_price=args.cache_read_price
    )
    print(
        f"window {args.window:,} (usable {config.budget.usable:,}), preset {args.preset}, "
        f"cache reads at {args.cache_read_price:g}, summaries deterministic (offline)"
    )
    print(HEADER)
    total = Tally()
    raw_fits = 0
    for name, path, run in recordings(args.folder):
        rows = replay_recording(path, run, config)
        tally = Tally()
        tally.add(rows, REWRITE_KINDS)
        total.add(rows, REWRITE_KINDS)
        fitting = sum(r.turn.raw_fits for r in rows)
        raw_fits += fitting
        print(_row(name, tally, fitting / len(rows) if rows else 1.0, args.cache_read_price))
    print(
        _row(
            "TOTAL (token-weighted)",
            total,
            raw_fits / total.turns if total.turns else 1.0,
            args.cache_read_price,
        )
    )


if __name__ == "__main__":
    main()
