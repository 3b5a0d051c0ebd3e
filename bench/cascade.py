"""The context cascade beside published policies, on recorded sessions, priced per provider.

Replays the recordings of the given folders (default: ../shared/trajectories and
../shared/corpus/mini-swe-agent-gemini) in one process with:

- ``raw``: no management (the cost baseline);
- ``naive 95%``: summarise everything but the last step once the request passes
  95% of the usable window (the common auto-compact policy);
- ``masking``: observation masking, the last 10 tool outputs kept;
- ``prune``: opencode-style: erase tool outputs older than the last 40k tokens of
  tool output once 20k can be freed (and the naive summary on overflow);
- bonsai's presets ``keep``, ``balanced`` (the default) and ``save``;

at each window (default 32k and 128k), and prints token-weighted totals:
managed/raw input, cache-eligible share, cost against raw under OpenAI-style
(cached 0.1×), Anthropic-style (writes 1.25×, reads 0.1×) and DeepSeek-style
(hit 0.1×, 64-token units) billing, share of calls that fit, rewrites per 100
calls (paid; free ones at cache expiry apart), the needed-later loss (share of
removed tokens, share of needed spans recoverable in one recall) and p95
pipeline time. The default preset's row is checked against the aims.

``--every N`` replays every N-th file of each folder (default 3: a deterministic,
evenly spread third; ``--every 1`` for all of it). ``--half 0`` / ``--half 1``
keeps every other run of those (the tuning half and the held-out half: the
presets were tuned on half 0 and are reported on half 1 as well, see
docs/benchmarks.md). The call times of each run come from its recording's
timestamps where the format has them, else from the pause model; the header
says how many runs used which.

``--breakdown`` adds the default preset's needed-later loss by what removed a
message (stub, fold, archive) and what it was (the agent's own message, a view
of a file's lines, a whole-file read, a search, a listing, another command), and
by its age at removal: the aggregate a held-out half may be looked at through.

    .venv/bin/python bench/cascade.py [FOLDER ...] [--window 32000 --window 128000] [--every 3] [--half 0|1] [--breakdown]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from bonsai.services.replay.billing import PauseModel
from bonsai.services.replay.corpus import Tally, load_sources, measure
from bonsai.services.replay.loss import Loss
from bonsai.services.replay.runner import ReplayConfig
from bonsai.services.replay.setup import build_config

ROOT = Path(__file__).resolve().parents[1]
SHARED = next(
    (p for p in (ROOT.parent / "shared", ROOT.parents[1] / "shared") if p.is_dir()),
    ROOT.parent / "shared",
)
DEFAULT_FOLDERS = [SHARED / "trajectories", SHARED / "corpus" / "mini-swe-agent-gemini"]
POLICIES: tuple[tuple[str, str, str | None], ...] = (
    ("raw", "none", None),
    ("naive 95%", "naive", None),
    ("masking 10", "masking", None),
    ("prune 40k", "prune", None),
    ("keep", "managed", "keep"),
    ("balanced", "managed", "balanced"),
    ("save", "managed", "save"),
)
DEFAULT = "balanced"


def aims(window: int, tally: Tally, loss: Loss) -> list[tuple[str, bool]]:
    """The aims of issue 23 for the default preset at this window."""
    if window >= 128_000:
        return [
            ("cost ≤ 0.85", tally.family_cost_ratio("openai") <= 0.85),
            ("fit 100%", tally.fit() == 1.0),
            ("rewrites < 3/100", tally.rewrites_per_100() < 3),
        ]
    return [
        ("fit 100%", tally.fit() == 1.0),
        ("managed ≤ 0.40", tally.managed <= 0.40 * tally.raw),
        ("OpenAI ≤ 0.60", tally.family_cost_ratio("openai") <= 0.60),
        ("Anthropic ≤ 0.65", tally.family_cost_ratio("anthropic") <= 0.65),
        ("loss ≤ 2%", loss.needed_share() <= 0.02),
        ("recoverable ≥ 90%", loss.recoverable_share() >= 0.90),
    ]


def config_for(window: int, policy: str, preset: str | None, pauses: PauseModel) -> ReplayConfig:
    config = build_config(window=window, policy=policy, preset=preset)  # type: ignore[arg-type]
    return ReplayConfig(**{**config.__dict__, "pauses": pauses})


HEADER = (
    f"{'policy':<11} {'managed':>7} {'cached':>6} {'OpenAI':>6} {'Anthr.':>6} {'DeepS.':>6} "
    f"{'fit':>6} {'rw/100':>6} {'expiry':>6} {'loss':>6} {'recov.':>6} {'p95 ms':>6} {'run s':>5}"
)


def row(label: str, tally: Tally, loss: Loss, seconds: float) -> str:
    return (
        f"{label:<11} {tally.managed / tally.raw:>7.3f} {tally.hit():>6.1%} "
        f"{tally.family_cost_ratio('openai'):>6.3f} {tally.family_cost_ratio('anthropic'):>6.3f} "
        f"{tally.family_cost_ratio('deepseek'):>6.3f} {tally.fit():>6.1%} "
        f"{tally.rewrites_per_100():>6.2f} {tally.expiry_rewrites:>6} {loss.needed_share():>6.2%} "
        f"{loss.recoverable_share():>6.1%} {tally.p95():>6.2f} {seconds:>5.0f}"
    )


def print_breakdown(loss: Loss) -> None:
    """The loss by what removed a message and what it was, then by its age at
    removal (tokens removed, tokens needed later, their share), most needed first."""
    for title, table in (
        ("removed by, output", loss.by_removal),
        ("output, age at removal", loss.by_age),
    ):
        print(f"  {title:<34} {'messages':>8} {'removed':>9} {'needed':>7} {'share':>6}")
        for key, (removed, needed, count) in sorted(table.items(), key=lambda kv: -kv[1][1]):
            share = needed / removed if removed else 0.0
            print(f"  {key:<34} {count:>8} {removed:>9,} {needed:>7,} {share:>6.2%}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--window", type=int, action="append")
    parser.add_argument("--every", type=int, default=3)
    parser.add_argument("--half", type=int, choices=(0, 1), help="every other run: 0 or 1")
    parser.add_argument("--policy", action="append", help="only these policies (labels)")
    parser.add_argument(
        "--breakdown",
        action="store_true",
        help="print the default preset's loss by remover and output kind, and by age at removal",
    )
    parser.add_argument("--pause-step", type=float, default=30.0)
    parser.add_argument("--pause-user", type=float, default=30.0)
    args = parser.parse_args()
    folders = args.folders or [f for f in DEFAULT_FOLDERS if f.is_dir()]
    sources = load_sources(folders, args.every)
    if args.half is not None:
        sources = sources[args.half :: 2]
    pauses = PauseModel(step_seconds=args.pause_step, user_seconds=args.pause_user)
    half = f", half {args.half} (every other run)" if args.half is not None else ""
    print(f"{len(sources)} recorded runs from {', '.join(str(f) for f in folders)}")
    print(f"(every {args.every}. file{half}); costs are managed/raw per family")
    stamped = sum(s.times is not None for s in sources)
    print(
        f"call times: {stamped} runs from recording timestamps, "
        f"{len(sources) - stamped} from the {pauses.describe()}"
    )
    for window in args.window or [32_000, 128_000]:
        print(f"\nwindow {window:,} (usable {window - 16_000:,})")
        print(HEADER)
        for label, policy, preset in POLICIES:
            if args.policy and label not in args.policy:
                continue
            started = time.perf_counter()
            tally, loss = measure(sources, config_for(window, policy, preset, pauses))
            print(row(label, tally, loss, time.perf_counter() - started), flush=True)
            if label == DEFAULT:
                verdicts = aims(window, tally, loss)
                print("  aims: " + ", ".join(f"{n} {'✓' if ok else '✗'}" for n, ok in verdicts))
                if args.breakdown:
                    print_breakdown(loss)


if __name__ == "__main__":
    main()
