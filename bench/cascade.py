"""The context cascade over recorded sessions: each preset beside two baselines.

Replays every recording of a folder (default ../shared/trajectories) with:

- ``none``: no management (the raw history; the cost baseline);
- ``naive``: summarise everything but the last step once the request passes
  95% of the usable window (the common auto-compact policy);
- bonsai's presets ``keep``, ``balanced`` (default) and ``save``.

and prints token-weighted totals: saved fraction, cache-hit fraction, cost
ratio against the raw history (cache reads at --cache-read-price), share of
calls that fit, rewrites, pipeline time, and each policy's cost relative to the
naive baseline. The targets (issue 6, at --window 32000) are printed with a
verdict per row.

    .venv/bin/python bench/cascade.py [FOLDER] [--window 32000]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from bonsai.core.replay.report import REWRITE_KINDS
from bonsai.services.replay.corpus import Tally, recordings, replay_recording
from bonsai.services.replay.setup import build_config

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_FOLDER = ROOT.parent / "shared" / "trajectories"
POLICIES: tuple[tuple[str, str, str | None], ...] = (
    ("none (raw)", "none", None),
    ("naive 95%", "naive", None),
    ("keep", "managed", "keep"),
    ("balanced", "managed", "balanced"),
    ("save", "managed", "save"),
)
TARGETS = "targets: fit 100%, managed ≤ 45% of raw (saved ≥ 55%), hit ≥ 83%, cost ≤ 0.70"


def run(folder: Path, window: int, price: float) -> dict[str, tuple[Tally, float]]:
    runs = list(recordings(folder))
    out: dict[str, tuple[Tally, float]] = {}
    for label, policy, preset in POLICIES:
        config = build_config(window=window, policy=policy, preset=preset, cache_read_price=price)  # type: ignore[arg-type]
        tally = Tally()
        started = time.perf_counter()
        for _, path, run_index in runs:
            tally.add(replay_recording(path, run_index, config), REWRITE_KINDS)
        out[label] = (tally, time.perf_counter() - started)
    return out


def verdict(tally: Tally, price: float) -> str:
    checks = [
        tally.fit() == 1.0,
        tally.managed <= 0.45 * tally.raw,
        tally.hit() >= 0.83,
        tally.cost_ratio(price) <= 0.70,
    ]
    return "".join("✓" if ok else "✗" for ok in checks)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("folder", nargs="?", type=Path, default=DEFAULT_FOLDER)
    parser.add_argument("--window", type=int, default=32_000)
    parser.add_argument("--cache-read-price", type=float, default=0.1)
    args = parser.parse_args()
    price = args.cache_read_price
    results = run(args.folder, args.window, price)
    naive_cost = results["naive 95%"][0].cost_ratio(price)
    print(
        f"window {args.window:,}, cache reads at {price:g}, {results['none (raw)'][0].turns} model calls; {TARGETS}"
    )
    print(
        f"{'policy':<12} {'managed/raw':>11} {'saved':>6} {'hit':>6} {'cost':>6} {'vs naive':>8} "
        f"{'fit':>6} {'rewrites':>8} {'p50 ms':>7} {'p95 ms':>7} {'run s':>6} {'fit/≤45%/hit/cost':>18}"
    )
    for label, (tally, seconds) in results.items():
        cost = tally.cost_ratio(price)
        print(
            f"{label:<12} {tally.managed / tally.raw:>11.3f} {tally.saved():>6.1%} {tally.hit():>6.1%} "
            f"{cost:>6.3f} {cost / naive_cost:>8.2f} {tally.fit():>6.1%} {tally.rewrites:>8} "
            f"{tally.p50():>7.2f} {tally.p95():>7.2f} {seconds:>6.2f} {verdict(tally, price):>18}"
        )


if __name__ == "__main__":
    main()
