"""O(window) history: per-turn assembly time and memory for 1k, 10k and 100k messages.

Builds each session straight into a temporary store (a user request, a tool
step reading a file and an answer per step; a new task episode every ten
steps, or with ``--one-episode`` one task episode all along, the commonest
long session) with a rolling summary folding all but the last 40 messages, as a long
session's compactions leave it. Then, in a fresh process per session and
path, it runs turns the way the daemon does (append a step, read the history,
assemble through the real bridge and pipeline, save the state) and reports
the median time per turn and the process's resident memory.

- **window** (the daemon's path): the turn reads the root and the log after
  the durable summary boundary; the state it loads holds only the window's entries;
- **full** (``--full``, the path before the boundary existed): the turn
  reads the whole log, derives the whole tree and assembles over it.

    .venv/bin/python bench/history_window.py [--full] [--one-episode] [--turns 5]
        [--sizes 1000,10000,100000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bonsai.agent.context_bridge import ContextBridge

# the same synthetic session the tests build (one definition of a "long session")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "history"))
from history_helpers import build_session, fold_all_but, make_bridge, step

from bonsai.core.context import assemble
from bonsai.services.store.db import open_database
from bonsai.services.store.sessions import SessionStore
from bonsai.settings import Settings

KEEP = 40


def build(db: Path, workspace: Path, messages: int, topics: bool) -> str:
    store = SessionStore(open_database(db))
    sid = build_session(store, workspace, messages, topics)
    fold_all_but(store, sid, KEEP)
    b = bridge(store, sid, workspace)
    b.assemble(b.history(), 1)  # the turn after the last fold sets the durable boundary
    store.conn.close()
    return sid


def bridge(store: SessionStore, sid: str, workspace: Path) -> ContextBridge:
    return make_bridge(store, sid, workspace, Settings())


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def measure(
    db: Path, sid: str, workspace: Path, path: str, turns: int, topics: bool
) -> dict[str, float]:
    """One process, one session, one path: turns as the daemon runs them."""
    store = SessionStore(open_database(db))
    b = bridge(store, sid, workspace)
    b.assemble(b.history(), 1)  # warm-up: imports, tokenizer, caches
    start_rss = rss_mb()
    times, rows = [], []
    for n in range(turns):
        store.append_many(sid, step(1_000_000 + n, topics))
        t0 = time.perf_counter()
        if path == "window":
            history = b.history()
            assembly = b.assemble(history, 2 + n)
        else:
            history = store.messages(sid)
            inp = b.input(history, 2 + n)
            assembly = assemble(inp)
            b.save_state(assembly.state)
        times.append(time.perf_counter() - t0)
        rows.append(len(history))
    state_bytes = len(
        store.get_state(sid, "context") and json.dumps(store.get_state(sid, "context"))
    )
    return {
        "ms": statistics.median(times) * 1000,
        "rows": statistics.median(rows),
        "rss": rss_mb(),
        "rss_growth": rss_mb() - start_rss,
        "state_kb": state_bytes / 1024,
        "sent": len(assembly.messages),
        "episodes": len(assembly.episodes),
        "first_episode": assembly.episodes[0].number if assembly.episodes else 0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--full", action="store_true", help="also time the full-read path")
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument(
        "--full-max",
        type=int,
        default=10_000,
        help="largest session the full-read path is timed on (it grows with the log)",
    )
    parser.add_argument(
        "--one-episode",
        action="store_true",
        help="one task episode all along (no topic changes) instead of one every ten steps",
    )
    parser.add_argument("--child", nargs=4, metavar=("DB", "SID", "WORKSPACE", "PATH"))
    args = parser.parse_args()
    topics = not args.one_episode
    if args.child:
        db, sid, ws, path = args.child
        print(json.dumps(measure(Path(db), sid, Path(ws), path, args.turns, topics)))
        return
    paths = ["window", "full"] if args.full else ["window"]
    sizes = [int(s) for s in args.sizes.split(",")]
    print(
        f"{'messages':>9} {'path':>7} {'rows read':>10} {'ms/turn':>9} {'RSS MB':>8} "
        f"{'RSS +MB':>8} {'state KB':>9} {'sent':>5} {'episodes':>9}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp) / "ws"
        workspace.mkdir()
        for size in sizes:
            for path in paths:
                if path == "full" and size > args.full_max:
                    continue
                db = Path(tmp) / f"s{size}-{path}.db"  # each path gets the same fresh session
                sid = build(db, workspace, size, topics)
                command = [
                    sys.executable,
                    __file__,
                    "--turns",
                    str(args.turns),
                    *(["--one-episode"] if args.one_episode else []),
                    "--child",
                    str(db),
                    sid,
                    str(workspace),
                    path,
                ]
                out = subprocess.run(
                    command,
                    check=True,
                    capture_output=True,
                    text=True,
                    env={**os.environ, "BONSAI_HOME": tmp},
                )
                r = json.loads(out.stdout)
                print(
                    f"{size:>9,} {path:>7} {r['rows']:>10,.0f} {r['ms']:>9.1f} {r['rss']:>8.1f} "
                    f"{r['rss_growth']:>8.1f} {r['state_kb']:>9.1f} {r['sent']:>5} "
                    f"{r['first_episode']:>5}..{r['first_episode'] + r['episodes'] - 1:<2}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
