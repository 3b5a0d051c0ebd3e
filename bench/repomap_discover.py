"""Discovery's CPU beside a bare walk of the same tree (issue 26).

    PYTHONPATH=server .venv/bin/python bench/repomap_discover.py [--runs 5] ROOT...

For each root: the median CPU time (``time.process_time``) of ``discover()``
(a fresh ``IgnoreRules`` each run, so every ``.gitignore`` is read again) and of
a bare walk that lists and stats the same tree with no rules at all (the floor
any discovery pays), timed in turn in the same process; the ratio between them
is what the ignore rules and the bookkeeping cost. Run it with another checkout's
``server`` on ``PYTHONPATH`` to compare two versions on the same machine load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from bonsai.services.repomap.discovery import IgnoreRules, discover


def bare_walk(root: Path) -> int:
    """Files under ``root`` (no symlinks followed), each stat'ed: the floor."""
    count = 0
    pending = [str(root)]
    while pending:
        with os.scandir(pending.pop()) as it:
            for entry in it:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
                else:
                    entry.stat()
                    count += 1
    return count


def cpu(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.process_time()
        fn()
        times.append(time.process_time() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("roots", nargs="+", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print("| tree | files | .gitignore files | discover CPU | bare walk CPU | ratio |")
    print("|---|---|---|---|---|---|")
    for root in args.roots:
        found = discover(IgnoreRules(root)).files
        ignores = sum(1 for c in found if c.path.rsplit("/", 1)[-1] == ".gitignore")
        ours = cpu(lambda root=root: discover(IgnoreRules(root)), args.runs)
        floor = cpu(lambda root=root: bare_walk(root), args.runs)
        print(
            f"| {root.name} | {len(found)} | {ignores} | {ours * 1000:.0f} ms"
            f" | {floor * 1000:.0f} ms | {ours / floor:.2f} |"
        )


if __name__ == "__main__":
    main()
