"""The grep tool's cost on an ordinary tree, against the search it replaced, in one run.

The tool now searches in a thread with ``regex`` (a time budget per file, the GIL let
go while it matches); before, Python's ``re`` searched each line on the event loop.
Both search the same texts, read by the tool's own walk: alternating, ``--rounds``
times, each pattern, the median of each printed with the machine's load.

    python bench/grep_tool.py [ROOT] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import time
from pathlib import Path

from bonsai.agent.tools import search
from bonsai.agent.tools.base import ToolContext
from bonsai.agent.tools.paths import workspace
from bonsai.agent.tools.walk import Walk
from bonsai.settings import Settings

PATTERNS = [r"def \w+\(", r"import", r"TODO|FIXME", r"class .*Error", r"self\.\w+ = "]


def old_search(root: Path, pattern: str) -> int:
    """The replaced search: ``re`` over every line, in this thread, to the same
    ``MAX_RESULTS`` matches."""
    compiled, hits = re.compile(pattern), 0
    with workspace(root) as ws:
        _, base = search._base_dir(ws, ".")
        for _, text in search._texts(ws, base, False, Walk()):
            hits += sum(1 for line in text.splitlines() if compiled.search(line))
            if hits > search.MAX_RESULTS:
                break
    return hits


def new_search(root: Path, pattern: str) -> str:
    ctx = ToolContext(workspace=root, session_id="bench", turn_id="bench", settings=Settings())
    return asyncio.run(search.grep(ctx, {"pattern": pattern})).content


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("root", nargs="?", default=str(Path(__file__).resolve().parents[1]))
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    root = Path(args.root)
    print(f"root {root}, load {os.getloadavg()[0]:.2f}")
    for pattern in PATTERNS:
        old: list[float] = []
        new: list[float] = []
        for _ in range(args.rounds):
            for times, run in ((old, old_search), (new, new_search)):
                began = time.perf_counter()
                run(root, pattern)
                times.append(time.perf_counter() - began)
        print(
            f"{pattern!r:24} re on the loop {statistics.median(old) * 1000:7.1f} ms   "
            f"regex in a thread {statistics.median(new) * 1000:7.1f} ms"
        )
    print(f"load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
