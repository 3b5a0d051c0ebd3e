"""Replay a whole corpus of recordings for each preset: per-family and total figures.

    python bench/replay_corpus.py --corpus ../shared/corpus/mini-swe-agent-gemini
        [--presets keep,balanced,save] [--window TOKENS] [--model gpt-4o] [--jobs 2]

First it imports every recording once and reports the import rate (MB of
recording per second). Then, per preset, it replays every run of every file in
up to ``--jobs`` worker processes (2 by default: the aim is the whole
150-trajectory corpus for one preset in under 3 minutes on 2 cores), with a
progress bar on stderr, and prints one row per family (the SWE-bench
repository, the part of the file name before ``__``; otherwise the format) and
the total: model calls, raw / managed / cached input tokens, the priced input
cost of both sides, the share of calls that fit the usable window, the
rewrites, and the wall time it took. The corpus is read in place, never copied.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

from bonsai.cli.replay_table import Progress
from bonsai.services.importers import ImportFormatError, import_file
from bonsai.services.replay.corpus import (
    ConfigSpec,
    RunResult,
    Tally,
    recording_files,
    replay_corpus,
    total_of,
)

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpus" / "mini-swe-agent-gemini"
HEADER = ("family", "runs", "calls", "raw", "managed", "cached", "raw $", "managed $", "fit", "rw")


def family(result: RunResult) -> str:
    name = Path(result.source).name
    return name.split("__", 1)[0] if "__" in name else result.format


def import_rate(files: list[Path]) -> tuple[float, float, float, int]:
    """(MB/s of wall time, MB/s of this process's CPU time, wall seconds, files)
    importing every recording once, in this process. On a shared, loaded machine
    the CPU-time rate is the one that measures the importer."""
    size, count = 0, 0
    started, cpu = time.perf_counter(), time.process_time()
    for path in files:
        try:
            import_file(path)
        except ImportFormatError:
            continue
        size += path.stat().st_size
        count += 1
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
    wall_rate = size / 1e6 / seconds if seconds else 0.0
    cpu_rate = size / 1e6 / cpu_seconds if cpu_seconds else 0.0
    return wall_rate, cpu_rate, seconds, count


def _row(name: str, runs: int, tally: Tally) -> list[str]:
    return [
        name,
        f"{runs}",
        f"{tally.turns:,}",
        f"{tally.raw:,}",
        f"{tally.managed:,}",
        f"{tally.cached:,}",
        f"{tally.raw_usd:.2f}",
        f"{tally.managed_usd:.2f}",
        f"{tally.fit() * 100:.1f}%",
        f"{tally.rewrites:,}",
    ]


def table(results: list[RunResult]) -> list[str]:
    groups: dict[str, list[RunResult]] = defaultdict(list)
    for result in results:
        groups[family(result)].append(result)
    rows = [_row(name, len(group), total_of(group)) for name, group in sorted(groups.items())]
    rows.append(_row("total", len(results), total_of(results)))
    widths = [max(len(r[i]) for r in [list(HEADER), *rows]) for i in range(len(HEADER))]

    def line(cells: list[str]) -> str:
        rest = (c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True))
        return "  ".join([cells[0].ljust(widths[0]), *rest])

    rule = "  ".join("-" * w for w in widths)
    return [line(list(HEADER)), rule, *(line(r) for r in rows[:-1]), rule, line(rows[-1])]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--presets", default="keep,balanced,save")
    parser.add_argument("--window", type=int, default=None, help="default: the model's window")
    parser.add_argument("--model", default="gpt-4o")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args()
    if not args.corpus.is_dir():
        print(f"no corpus at {args.corpus} (pass --corpus DIR)", file=sys.stderr)
        return 2
    files = recording_files([args.corpus])
    rate, cpu_rate, seconds, count = import_rate(files)
    print(
        f"corpus {args.corpus}: {count} recordings imported in {seconds:.2f} s "
        f"({rate:.1f} MB/s wall, {cpu_rate:.1f} MB/s of CPU time)"
    )
    for preset in args.presets.split(","):
        spec = ConfigSpec(model=args.model, window=args.window, preset=preset)  # type: ignore[arg-type]
        bar = Progress(len(files), enabled=not args.no_progress)
        started = time.perf_counter()
        before = os.times()
        results = replay_corpus(files, spec, jobs=args.jobs, progress=bar.advance)
        bar.close()
        elapsed = time.perf_counter() - started
        after = os.times()
        cpu = (after.children_user + after.children_system + after.user + after.system) - (
            before.children_user + before.children_system + before.user + before.system
        )
        runs = [r for f in results for r in f.runs]
        window = runs[0].report.window if runs else 0
        print(
            f"\npreset {preset} · {args.model} · window {window:,} · {len(runs)} runs · "
            f"{args.jobs} worker(s) · {elapsed:.1f} s wall, {cpu:.1f} s CPU"
        )
        print("\n".join(table(runs)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
