"""Benchmark: one-file edits of the repository map, many of each kind, in one process.

    .venv/bin/python bench/repomap_edits.py --root REPO --target rel/path.py \\
        [--db CACHE.db] [--edits 8] [--task "issue text"] [--profile N]

The edit sequence of ``bench/repomap.py`` (``_edits``) made longer, so a median
means something: a warm start from the tag cache (``--db``, filled on the first
run), a first map with the task's text, a first edit (loads the grammar), then
``--edits`` edits that each keep every name of the file (a changed comment) and
``--edits`` that each add one more function (named anew in every run, so the
name is new to the saved graph too); after each, the map for the task's
text. Prints one JSON line: the median and every CPU millisecond of each kind,
and a plain tree-sitter parse of the edited file (CPU ms, median of five), so the
edit is also a ratio to it, and how many edits of each kind rendered the map again
(the stability rule keeps the previous text unless the map changed: an edit of a
file the map shows renders; ``bench/repomap.py``'s task on the stdlib copy,
``in_table_b1() raises TypeError...``, shows ``json/decoder.py``; the default task
here does not). Also the warm start's CPU ms (build and first map, which settles
the heap as the daemon's does, ``heap.py``), the first edit (a changed comment: the
first parse of the session) and the first add on their own (the first edit of a session
that adds a name: the first time two views are alive) and the CPU ms the cycle
collector took over all the edits. The file is restored at the end.

Run it once per checkout (``PYTHONPATH=<checkout>/server``), alternating, to
compare two versions under the same load. ``--profile N`` prints the N most
expensive functions (cumulative) over the adding edits.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

DEFAULT_TASK = (
    "Calling get_default_browser() ignores the BROWSER environment variable when it is"
    " set: the default browser is not used and the lookup falls back to the first"
    " registered one. Expected the configured command to be opened with the URL, as"
    " the documentation describes."
)


def chars4(text: str) -> int:
    return (len(text) + 3) // 4


def _parse_cpu_ms(path: Path) -> float:
    import tree_sitter as ts

    from bonsai.services.repomap.languages import language_for_path, load_language

    grammar = load_language(language_for_path(path.name) or "")
    if grammar is None:
        return float("nan")
    parser = ts.Parser(grammar)
    data = path.read_bytes()
    runs = []
    for _ in range(5):
        c0 = time.process_time()
        parser.parse(data)
        runs.append((time.process_time() - c0) * 1000)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True, type=Path)
    parser.add_argument("--target", required=True, help="the edited file, relative to --root")
    parser.add_argument("--db", type=Path, default=None)
    parser.add_argument("--edits", type=int, default=8)
    parser.add_argument("--task", default=DEFAULT_TASK)
    parser.add_argument("--profile", type=int, default=0)
    args = parser.parse_args()

    import gc

    import bonsai
    from bonsai.services.repomap import RepoMapService
    from bonsai.settings import RepoMapSettings

    root = args.root.resolve()
    db = args.db or root.parent / f"{root.name}-edits.db"
    target = root / args.target
    original = target.read_text()
    service = RepoMapService(root, db, RepoMapSettings(), chars4)
    w0 = time.process_time()
    # as the daemon's service, which watches (a checkout before heap.py has none)
    getattr(service, "keep_for_edits", lambda: None)()
    n_files = service.build().files
    service.get(tokens=1024, mentions=args.task)
    warm_ms = (time.process_time() - w0) * 1000
    gc_ms = [0.0]
    gc_t0 = [0.0]

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            gc_t0[0] = time.process_time()
        else:
            gc_ms[0] += (time.process_time() - gc_t0[0]) * 1000

    gc.callbacks.append(on_gc)
    profile = cProfile.Profile() if args.profile else None

    rendered = {"keep": 0, "add": 0}  # edits whose map was rendered again (not kept)

    def edit(text: str, profiled: bool = False, kind: str = "") -> float:
        target.write_text(text)
        c0 = time.process_time()
        if profile is not None and profiled:
            profile.enable()
        service.update_paths([target])
        result = service.get(tokens=1024, mentions=args.task)
        if profile is not None and profiled:
            profile.disable()
        if kind and not result.cached:
            rendered[kind] += 1
        return (time.process_time() - c0) * 1000

    try:
        first_edit = edit(original + "\n# first edit\n")
        keep = [
            edit(original + f"\n# an edit, no new name {k}\n", kind="keep")
            for k in range(args.edits)
        ]
        text, add = original, []
        run = os.getpid()  # names no earlier run left in the saved graph: new to it
        for k in range(args.edits):
            text += f"\n\ndef bench_added_{run}_{k}():\n    pass\n"
            add.append(edit(text, profiled=True, kind="add"))
    finally:
        target.write_text(original)
        service.update_paths([target])
        service.stop()
    parse_ms = _parse_cpu_ms(target)
    out = {
        "code": str(Path(bonsai.__file__).parent),
        "files": n_files,
        "keep_ms": round(statistics.median(keep), 2),
        "add_ms": round(statistics.median(add), 2),
        "parse_ms": round(parse_ms, 3),
        "keep_x_parse": round(statistics.median(keep) / parse_ms, 1),
        "add_x_parse": round(statistics.median(add) / parse_ms, 1),
        "warm_ms": round(warm_ms, 1),
        "first_edit_ms": round(first_edit, 2),
        "first_add_ms": round(add[0], 2),
        "gc_ms_edits": round(gc_ms[0], 2),
        "keep_all": [round(x, 1) for x in keep],
        "add_all": [round(x, 1) for x in add],
        "keep_rendered": rendered["keep"],
        "add_rendered": rendered["add"],
    }
    print(json.dumps(out), flush=True)
    if profile is not None:
        pstats.Stats(profile, stream=sys.stderr).sort_stats("cumulative").print_stats(args.profile)


if __name__ == "__main__":
    main()
