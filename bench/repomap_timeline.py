"""The timeline of one cold repo-map build: where the parsers (this process and
its parse workers) are busy and where they wait.

    .venv/bin/python bench/repomap_timeline.py ROOT [--task TEXT] [--workers 2]

Runs ``RepoMapService.build`` (with a first map for ``--task``) and ``get`` on an
empty cache in this process, with timestamps (``time.monotonic``, one clock for
every process on Linux) around each phase of the building process and each
chunk it parses, and a worker that is the real worker loop with a timestamp
around each chunk it reads, parses and writes (``repomap_timeline_worker.py``).
Prints the phases, then per parser its busy time and CPU, the time during
which both kinds of parser were busy, and the critical path in CPU seconds (the
part before parsing, the busier parser — this process's side includes choosing
the first map's files, which the workers' parsing overlaps — the part after it) as a ratio to a
plain parse of the same files in the same run: what the wall time is on
otherwise idle cores, where this machine's load makes wall times meaningless. Instrumentation only: the build and its
schedule are the service's own.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
Event = tuple[float, float, str, str, float]  # start, end, who, what, CPU seconds


def _intervals(events: list[Event], who: str, what: str) -> list[tuple[float, float]]:
    return [(e[0], e[1]) for e in events if e[2] == who and e[3] == what]


def _union(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _overlap(x: list[tuple[float, float]], y: list[tuple[float, float]]) -> float:
    total = 0.0
    for a, b in x:
        for c, d in y:
            total += max(0.0, min(b, d) - max(a, c))
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", type=Path)
    ap.add_argument("--task", default="", help="the task text of the first map")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    t_import = time.monotonic()
    from bonsai.services.repomap import first_map, indexer, service
    from bonsai.services.repomap.first_map import FirstRequest
    from bonsai.settings import RepoMapSettings

    events: list[Event] = []
    lock = threading.Lock()

    def record(who: str, what: str, start: float, cpu: float) -> None:
        with lock:
            events.append((start, time.monotonic(), who, what, cpu))

    def timed(what: str, fn: Callable[..., Any], who: str = "main") -> Callable[..., Any]:
        def run(*a: Any, **k: Any) -> Any:
            start, cpu = time.monotonic(), time.thread_time()
            try:
                return fn(*a, **k)
            finally:
                name = threading.current_thread().name
                record(
                    who if name == "MainThread" else "feeder", what, start, time.thread_time() - cpu
                )

        return run

    logs: list[Path] = []
    tmp = Path(tempfile.mkdtemp(prefix="bonsai-timeline-"))

    def spawn() -> subprocess.Popen[str]:
        log = tmp / f"worker-{len(logs)}.jsonl"
        logs.append(log)
        started = time.monotonic()
        record("main", "spawn", started, 0.0)
        return subprocess.Popen(
            [sys.executable, str(HERE / "repomap_timeline_worker.py"), str(log), str(started)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )

    indexer.spawn_worker = spawn
    indexer._index_chunk = timed("parse", indexer._index_chunk)
    for name, what in (("_receive", "receive"), ("_send", "send"), ("_run_remote", "remote chunk")):
        if hasattr(indexer, name):  # _run_remote: the schedule before the sixth round
            setattr(indexer, name, timed(what, getattr(indexer, name)))
    service.discover = timed("discover", service.discover)
    service.RepoMapService._first_pass = timed(
        "choose first files", service.RepoMapService._first_pass
    )
    service.RepoMapService._apply = timed("store rows", service.RepoMapService._apply)
    first_map.first_map = timed("first map", first_map.first_map)  # ranked and rendered
    try:  # the graph core made while the files parse (seventh round)
        from bonsai.services.repomap import core_stream

        core_stream.CoreStream.add = timed("stream core", core_stream.CoreStream.add)
    except ImportError:
        pass
    delivered: list[tuple[float, float]] = []  # when, and this process's CPU by then
    db = tmp / "cache.db"
    c0 = time.process_time()
    t0 = time.monotonic()
    svc = service.RepoMapService(
        args.root, db, RepoMapSettings(workers=args.workers), lambda s: (len(s) + 3) // 4
    )
    record("main", "open cache", t0, 0.0)
    first = FirstRequest(
        lambda m: delivered.append((time.monotonic(), time.process_time() - c0)),
        (),
        args.task,
        1024,
    )
    start, cpu = time.monotonic(), time.thread_time()
    svc.build(first=first)
    record("main", "build", start, time.thread_time() - cpu)
    start, cpu = time.monotonic(), time.thread_time()
    svc.get(tokens=1024)
    record("main", "get (graph, rank, render)", start, time.thread_time() - cpu)
    end = time.monotonic()
    main_cpu = time.process_time() - c0
    svc.stop()
    for i, log in enumerate(logs):
        for line in log.read_text().splitlines():
            e = json.loads(line)
            events.append((e["start"], e["end"], f"worker {i}", e["what"], e["cpu"]))
    print(
        f"{args.root}: cold build -> map {end - t0:.2f} s wall, this process {main_cpu:.2f} s CPU"
        f" (imports before it: {t0 - t_import:.2f} s)"
    )
    print(f"{'at':>7} {'to':>7}  {'who':<9} {'what':<28} {'n':>4} {'wall':>7} {'CPU':>7}")
    groups: dict[tuple[str, str], list[Event]] = {}
    for e in sorted(events):
        groups.setdefault((e[2], e[3]), []).append(e)
    for (who, what), evs in sorted(groups.items(), key=lambda kv: kv[1][0][0]):
        wall = sum(e[1] - e[0] for e in evs)
        cpu = sum(e[4] for e in evs)
        print(
            f"{evs[0][0] - t0:7.3f} {evs[-1][1] - t0:7.3f}  {who:<9} {what:<28} {len(evs):>4}"
            f" {wall:7.3f} {cpu:7.3f}"
        )
    if delivered:
        print(
            f"first map delivered at {delivered[0][0] - t0:.3f} s,"
            f" this process's CPU by then {delivered[0][1]:.3f} s"
        )
    local = _union(_intervals(events, "main", "parse"))
    remote = _union(
        [s for i in range(len(logs)) for s in _intervals(events, f"worker {i}", "parse")]
    )
    if remote:
        both = _overlap(local, remote)
        last = max(b for _, b in local + remote)
        first_parse = min(a for a, _ in local + remote)
        print(
            f"parsing from {first_parse - t0:.3f} to {last - t0:.3f} s; both sides parsing"
            f" {both:.3f} s; this process {sum(b - a for a, b in local):.3f} s,"
            f" workers {sum(b - a for a, b in remote):.3f} s;"
            f" serial before {first_parse - t0:.3f} s, after {end - last:.3f} s"
        )
    from repomap import parse_only  # the bench's plain single-threaded parse

    files = [c.path for c in service.discover(svc.rules).files]
    _, parse_cpu = parse_only(args.root, files)

    def cpu(who: str, *whats: str) -> float:
        return sum(e[4] for e in events if e[2] == who and e[3] in whats)

    # the first files are chosen while the workers parse (the seventh round's
    # schedule): this process's side, not the serial part before the parse
    before = cpu("main", "discover")
    tail = cpu("main", "store rows", "get (graph, rank, render)")
    sides = [
        cpu("main", "choose first files", "parse", "first map", "stream core")
        + cpu("feeder", "receive", "send", "remote chunk", "stream core")
    ]
    sides += [
        cpu(f"worker {i}", "start (imports)", "parse", "write results") for i in range(len(logs))
    ]
    path = before + max(sides) + tail
    if delivered:  # this process is one of the two parsers: its CPU is its time on idle cores
        print(
            f"first map after {delivered[0][1] / parse_cpu:.2f}x the plain parse's CPU"
            " in this process (its time on otherwise idle cores, an estimate)"
        )
    print(
        f"plain parse {parse_cpu:.2f} s CPU; critical path in CPU (before the parse"
        f" {before:.2f} + the busier parser {max(sides):.2f} + after it {tail:.2f}) = {path:.2f} s"
        f" = {path / parse_cpu:.2f}x the plain parse; whole tree {main_cpu + sum(sides[1:]):.2f} s CPU"
        f" = {(main_cpu + sum(sides[1:])) / parse_cpu:.2f}x"
    )


if __name__ == "__main__":
    main()
