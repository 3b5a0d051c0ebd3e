"""Load benchmark: many clients, many sessions streaming at once (loopback only).

N clients attach to S sessions (two or more clients per session) on one daemon;
every session runs turns against a loopback stream server whose deltas carry
their send time, so each client measures token → receipt latency exactly.
Reports events/s, latency p50/p95/p99, daemon CPU and RSS; then the RSS of a
daemon holding 100 idle sessions of ~50k tokens each.

    python bench/load.py [--clients 20] [--sessions 10] [--turns 3] [--tokens 200]

Polling mode (``--polling``): the same streaming run twice, bounded to
``--seconds`` (60), on sessions that already hold ``--history`` messages of
~2,000 tokens: once alone, once while ``--pollers`` (10) more clients ask for
``bonsai/ctx/get`` every ``--poll-ms`` (200 ms), as an open ledger does. Reports
the streamed-event latency of both runs side by side, the ctx/get latency, the daemon's
CPU time per event and the ratios of the two runs (what load distorts least). The clients
are asyncio connections in one loop and the stream server has its own process
(``bench/load_clients.py``); ``--profile OUT`` profiles the daemon with pollers.

    python bench/load.py --polling [--pollers 10] [--poll-ms 200] [--seconds 60]
        [--only alone|pollers] [--profile OUT [--profile-run alone|pollers]] [--trace]
        [--no-keep-alive]

``--trace`` has the daemon stamp every ``ctx/get`` end to end (``BONSAI_CTX_TRACE``) and
prints the slowest 5% of polls by phase against all of them (``bench/poll_trace.py``),
with the measuring process's own loop lag. Besides events/s and the latencies it
reports the daemon's CPU per event (and the kernel's share of it, ``sys %``), tokens per delta event and the turns run: CPU per
turn and per token follow from two runs at different ``--tokens``. The profile is of
the loop thread's CPU time (``bench/profiled_daemon.py``).

Bounded: a fixed number of turns, a deadline, loopback addresses only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from bonsai.cli.client import DaemonClient
from load_clients import AsyncClient, cpu_s, cpu_split, start_stream_process
from open_loop import Schedule, offsets, on_schedule, period_for
from poll_trace import LagMeter, breakdown
from proc_tree import TreeSampler

DEADLINE_S = 300


# ----------------------------------------------------------------- helpers
def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def start_daemon(
    home: Path, port: int, profile: str | None = None, extra: dict[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], dict[str, str]]:
    env = {
        **os.environ,
        "BONSAI_HOME": str(home),
        "BONSAI_PROVIDER": "sim",
        "BONSAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
        "BONSAI_MODEL": "gpt-4o-mini",
        **(extra or {}),
    }
    runner = [str(Path(__file__).with_name("profiled_daemon.py")), profile] if profile else []
    command = [sys.executable, *(runner or ["-m", "bonsai"]), "serve", "--socket", "auto"]
    proc = subprocess.Popen(command, env=env)
    os.environ.update(env)
    deadline = time.monotonic() + 120  # a loaded machine: 10-30 s
    while not (home / "daemon.json").exists():
        if time.monotonic() > deadline:
            raise SystemExit("daemon did not start")
        time.sleep(0.05)
    return proc, env


# ----------------------------------------------------------------- the streaming run
def client_loop(
    home: Path,
    sid: str,
    send: bool,
    turns: int,
    lat: list[float],
    done: list[int],
    until: float | None = None,
) -> None:
    client = DaemonClient.connect(home, start=False)
    finished: list[str] = []

    def on_event(method: str, params: dict) -> None:
        if method != "bonsai/chat/event":
            return
        if params["kind"] == "delta":
            now = time.time()
            for part in params["text"].split("]"):
                if part.startswith("["):
                    lat.append((now - float(part[1:])) * 1000)
        elif params["kind"] in ("done", "error"):
            finished.append(params["turnId"])

    client.on_notification = on_event
    client.request("bonsai/session/attach", {"sessionId": sid})
    deadline = time.monotonic() + DEADLINE_S
    if until is not None:  # a turn begun before ``until`` ends well within this
        deadline = min(deadline, until + (30 if send else 10))
    for _ in range(turns):
        if until is not None and time.monotonic() > until:
            break
        if send:
            turn = client.request("bonsai/chat/send", {"sessionId": sid, "text": "go"})["turnId"]
        target = len(finished) + 1
        while len(finished) < target and time.monotonic() < deadline:
            client.pump()
        if send and until is None:
            assert turn in finished
    done.append(1)
    client.close()


def streaming(args: argparse.Namespace) -> None:
    stream_proc, port = start_stream_process(args.tokens, not args.no_keep_alive)
    home = Path(tempfile.mkdtemp(prefix="bonsai-load-"))
    proc, _ = start_daemon(home, port)
    setup = DaemonClient.connect(home, start=False)
    sids = [
        setup.request("bonsai/session/create", {"workspace": str(home)})["sessionId"]
        for _ in range(args.sessions)
    ]
    latencies: list[float] = []
    done: list[int] = []
    cpu0, t0 = cpu_s(proc.pid), time.monotonic()
    threads = [
        threading.Thread(
            target=client_loop,
            args=(home, sids[i % args.sessions], i < args.sessions, args.turns, latencies, done),
        )
        for i in range(args.clients)
    ]
    peak = 0.0
    for thread in threads:
        thread.start()
    while any(t.is_alive() for t in threads):
        peak = max(peak, rss_mb(proc.pid))
        time.sleep(0.1)
    elapsed = time.monotonic() - t0
    cpu = cpu_s(proc.pid) - cpu0
    print(
        f"streaming: {args.clients} clients, {args.sessions} sessions, {args.turns} turns each, "
        f"{args.tokens} deltas per turn"
    )
    print(
        f"  events received       {len(latencies):>10,}  ({len(latencies) / elapsed:,.0f} events/s)"
    )
    print(
        f"  latency ms p50/p95/p99 {pct(latencies, 0.5):.2f} / {pct(latencies, 0.95):.2f} / "
        f"{pct(latencies, 0.99):.2f}  (mean {statistics.fmean(latencies):.2f})"
    )
    print(
        f"  daemon CPU {cpu:.1f}s over {elapsed:.1f}s ({100 * cpu / elapsed:.0f}% of one core); "
        f"peak RSS {peak:.0f} MB"
    )
    setup.request("bonsai/daemon/stop")
    proc.wait(30)
    stream_proc.kill()


async def _stream(
    client: AsyncClient,
    sid: str,
    send: bool,
    lat: list[float],
    frames: list[int],
    turns: list[int],
    until: float,
    slots: tuple[float, float] | None = None,
    plan: list[Schedule] | None = None,
    inside: list[int] | None = None,
    lasted: list[float] | None = None,
) -> None:
    """Attach and, for a sender, run turns until ``until``: back to back (closed loop) or,
    with ``slots`` (first slot, period), one per slot (open loop, ``bench/open_loop.py``;
    what the schedule did goes to ``plan``). Stamp every delta (``lat``: one latency per
    token; ``frames``: one item per delta event received; ``inside``: tokens received
    before the window closed; ``lasted``: each turn's ms from its send to its end)."""
    finished: list[asyncio.Event] = []
    closes = time.time() + max(0.0, until - time.monotonic())

    def on_event(method: str, params: dict, at: float) -> None:
        if method != "bonsai/chat/event":
            return
        if params["kind"] == "delta":
            frames.append(1)
            n = len(lat)
            for part in params["text"].split("]"):
                if part.startswith("["):
                    lat.append((at - float(part[1:])) * 1000)
            if inside is not None and at <= closes:
                inside[0] += len(lat) - n
        elif params["kind"] in ("done", "error") and finished:
            finished[-1].set()

    async def turn() -> None:
        finished.append(asyncio.Event())
        began = time.monotonic()
        await client.request("bonsai/chat/send", {"sessionId": sid, "text": "go"})
        await asyncio.wait_for(finished[-1].wait(), 60)
        turns.append(1)
        if lasted is not None:
            lasted.append((time.monotonic() - began) * 1000)

    client.on_notification = on_event
    await client.request("bonsai/session/attach", {"sessionId": sid})
    if not send:
        await asyncio.sleep(max(0.0, until - time.monotonic()) + 5)
        return
    if slots is not None:
        first, period = slots
        done = await on_schedule(turn, start=first, period=period, until=until)
        if plan is not None:
            plan.append(done)
        return
    while time.monotonic() < until:
        await turn()


async def _poll(
    client: AsyncClient,
    sid: str,
    every_s: float,
    lat: list[float],
    cold: list[float],
    until: float,
    stamped: list[dict[str, Any]],
    cold_first: bool,
) -> None:
    """One open ledger: ``bonsai/ctx/get`` every ``every_s``, timing each answer
    (``stamped``: each answer's stamps, ``bench/poll_trace.py``; ``cold_first``: the first
    answer is reported apart, as the session's first view)."""
    first = cold_first
    while time.monotonic() < until:
        t0 = time.perf_counter()
        _, stamps = await client.timed("bonsai/ctx/get", {"sessionId": sid, "view": "ledger"})
        took = (time.perf_counter() - t0) * 1000
        (cold if first else lat).append(took)  # the first loads the tokenizer, reads git
        if not first:
            stamped.append(stamps)
        first = False
        await asyncio.sleep(max(0.0, every_s - (time.perf_counter() - t0)))


async def _warm(watchers: list[AsyncClient], sids: list[str], cold: list[float]) -> float | None:
    """Before the measured window: each poller's first ctx/get (the session's first view),
    then, when the daemon uses a view process, until it runs and has answered each session
    once (its caches warm), as a ledger open for more than a few seconds finds it. The
    answers are reported apart (``cold``); returns how long the view process took to run."""
    began = time.monotonic()

    async def each() -> None:
        await asyncio.gather(
            *(_timed_get(c, sids[i % len(sids)], cold) for i, c in enumerate(watchers))
        )

    await each()
    status = await watchers[0].request("bonsai/daemon/status")
    if not str(status.get("views", "")).startswith("view process"):
        return None  # the thread computes the views
    while not _all_running(str(status.get("views", ""))) and time.monotonic() - began < 180:
        await asyncio.sleep(0.2)
        status = await watchers[0].request("bonsai/daemon/status")
    ready = time.monotonic() - began
    await each()  # the view process's first answer of each session
    return ready


def _all_running(views: str) -> bool:
    """Every view process the daemon made runs (none still starting)."""
    return "running" in views and "starting" not in views and "not running" not in views


async def _timed_get(client: AsyncClient, sid: str, into: list[float]) -> None:
    t0 = time.perf_counter()
    await client.request("bonsai/ctx/get", {"sessionId": sid, "view": "ledger"})
    into.append((time.perf_counter() - t0) * 1000)


async def _prefill(home: Path, sessions: int, history: int) -> list[str]:
    setup = await AsyncClient.connect(home)
    chunk = "lorem ipsum dolor sit amet " * 370  # ~2,000 tokens
    sids = []
    for _ in range(sessions):
        sid = (await setup.request("bonsai/session/create", {"workspace": str(home)}))["sessionId"]
        for n in range(history):
            role = "user" if n % 2 == 0 else "assistant"
            await setup.request(
                "bonsai/session/append", {"sessionId": sid, "role": role, "content": chunk}
            )
        sids.append(sid)
    await setup.close()
    return sids


async def _measure(
    args: argparse.Namespace,
    home: Path,
    pid: int,
    sids: list[str],
    pollers: int,
    rate: float | None = None,
) -> dict[str, Any]:
    streamers = [await AsyncClient.connect(home) for _ in range(args.clients)]
    watchers = [await AsyncClient.connect(home) for _ in range(pollers)]
    latencies: list[float] = []
    frames: list[int] = []
    turns: list[int] = []
    polls: list[float] = []
    cold: list[float] = []
    stamped: list[dict[str, Any]] = []
    lag = LagMeter()
    ready_s = await _warm(watchers, sids, cold) if watchers and not args.cold else None
    until = time.monotonic() + args.seconds
    peak = 0.0
    samples: list[float] = []
    tree = TreeSampler(pid)  # the daemon and its view process

    async def sample_rss() -> None:
        nonlocal peak
        while True:
            samples.append(rss_mb(pid))
            peak = max(peak, samples[-1])
            tree.sample()
            await asyncio.sleep(0.2)

    if args.stalls:  # the stall report starts here, after the prefill and the connects
        os.kill(pid, signal.SIGUSR1)
    load0 = os.getloadavg()[0]
    (user0, sys0), own0, t0 = cpu_split(pid), cpu_s(), time.monotonic()
    sampler = asyncio.ensure_future(sample_rss())
    ticker = asyncio.ensure_future(lag.run())
    every = args.poll_ms / 1000
    plan: list[Schedule] = []
    inside = [0]
    lasted: list[float] = []
    slots: list[tuple[float, float] | None] = [None] * len(streamers)
    if rate is not None:  # open loop: each sender's turns on its own fixed slots
        period = period_for(rate, args.tokens, args.clients)
        senders = min(len(sids), len(streamers))
        slots[:senders] = [(t0 + at, period) for at in offsets(senders, period)]
    await asyncio.gather(
        *(
            _stream(
                c,
                sids[i % len(sids)],
                i < len(sids),
                latencies,
                frames,
                turns,
                until,
                slots[i],
                plan,
                inside,
                lasted,
            )
            for i, c in enumerate(streamers)
        ),
        *(
            _poll(c, sids[i % len(sids)], every, polls, cold, until, stamped, args.cold)
            for i, c in enumerate(watchers)
        ),
    )
    elapsed = time.monotonic() - t0
    user, system = (now - then for now, then in zip(cpu_split(pid), (user0, sys0), strict=True))
    cpu, own = user + system, cpu_s() - own0
    sampler.cancel()
    ticker.cancel()
    tree.sample()
    for client in [*streamers, *watchers]:
        await client.close()
    return {
        "events": len(latencies),
        "events_s": len(latencies) / elapsed,
        "per_frame": len(latencies) / max(1, len(frames)),
        "turns": len(turns),
        "p50": pct(latencies, 0.5),
        "p95": pct(latencies, 0.95),
        "p99": pct(latencies, 0.99),
        "polls": len(polls),
        "poll_p50": pct(polls, 0.5),
        "poll_p95": pct(polls, 0.95),
        "cold_max": max(cold, default=0.0),
        "cpu_pct": 100 * cpu / elapsed,
        "cpu_us_event": 1e6 * cpu / max(1, len(latencies)),
        "sys_share": 100 * system / max(cpu, 1e-9),
        "own_pct": 100 * own / elapsed,
        "rss": peak,
        "rss_path": [samples[min(len(samples) - 1, q * len(samples) // 4)] for q in range(5)]
        if samples
        else [0.0] * 5,
        "view_pct": 100 * tree.children_cpu_s() / elapsed,
        "tree_rss": tree.rss_peak,
        "tree_pss": tree.pss_peak,
        "seconds": elapsed,
        "load": (load0 + os.getloadavg()[0]) / 2,
        "phases": breakdown(stamped, lag),
        "view_ready_s": ready_s,
        **(_open_loop(plan, inside[0], lasted, args, lag) if rate is not None else {}),
    }


def _open_loop(
    plan: list[Schedule],
    inside: int,
    lasted: list[float],
    args: argparse.Namespace,
    lag: LagMeter,
) -> dict[str, float]:
    """An open-loop run's own figures: the events offered (every slot's turn, to every
    client of its session) and carried (received before the window closed) per second,
    the late turns, how late turns started and how long they lasted (send to end); the
    bench's own loop lag beside them."""
    done = Schedule()
    for one in plan:
        done.merge(one)
    per_turn = args.tokens * args.clients / max(1, min(args.sessions, args.clients))
    return {
        "offered_s": done.slots * per_turn / args.seconds,
        "carried_s": inside / args.seconds,
        "slots": done.slots,
        "late": done.late,
        "start_p50": pct(done.start_lag_ms, 0.5),
        "start_max": max(done.start_lag_ms, default=0.0),
        "turn_p50": pct(lasted, 0.5),
        "turn_p95": pct(lasted, 0.95),
        "bench_lag_p99": pct(lag.late_ms, 0.99),
    }


def polling_run(
    args: argparse.Namespace,
    pollers: int,
    profile: str | None,
    keep_alive: bool | None = None,
    rate: float | None = None,
) -> dict[str, Any]:
    """Streaming on pre-filled sessions for ``args.seconds``, with ``pollers`` ledgers open;
    at ``rate`` delta events per second on a fixed schedule (open loop) when given."""
    kept = not args.no_keep_alive if keep_alive is None else keep_alive
    stream_proc, port = start_stream_process(args.tokens, kept)
    home = Path(tempfile.mkdtemp(prefix="bonsai-poll-"))
    extra = {"BONSAI_STALLS": str(home / "stalls.json")} if args.stalls else {}
    if args.gc_policy:
        extra["BONSAI_GC_POLICY"] = args.gc_policy
    if args.trace:  # every ctx/get stamped end to end (session/request_trace.py)
        extra["BONSAI_CTX_TRACE"] = "1"
    proc, _ = start_daemon(home, port, profile, extra)
    try:

        async def run() -> dict[str, Any]:
            sids = await _prefill(home, args.sessions, args.history)
            result = await _measure(args, home, proc.pid, sids, pollers, rate)
            stopper = await AsyncClient.connect(home)
            await stopper.request("bonsai/daemon/stop")
            return result

        result = asyncio.run(run())
        proc.wait(60)
        if args.stalls:
            result["stalls"] = json.loads((home / "stalls.json").read_text())
        return result
    finally:
        stream_proc.kill()
        if proc.poll() is None:
            proc.kill()


def polling(args: argparse.Namespace) -> None:
    if args.rate:
        open_loop(args)
        return
    print(
        f"polling: {args.clients} clients streaming on {args.sessions} sessions of "
        f"{args.history} messages (~{args.history * 2}k tokens), {args.tokens} deltas per turn, "
        f"{args.seconds:.0f} s; then the same with {args.pollers} clients polling bonsai/ctx/get "
        f"every {args.poll_ms} ms; the stream server "
        f"{'closes each connection' if args.no_keep_alive else 'keeps connections alive'}"
    )
    alone = args.profile if args.profile_run == "alone" else None
    busy = args.profile if args.profile_run == "pollers" else None
    runs = {}
    if args.only in (None, "alone"):
        runs["alone"] = polling_run(args, 0, alone)
    if args.only in (None, "pollers"):
        runs["with pollers"] = polling_run(args, args.pollers, busy)
    print(
        f"  {'':14}{'events':>9}{'ev/s':>7}{'p50 ms':>8}{'p95 ms':>8}{'p99 ms':>8}"
        f"{'ctx/get':>8}{'get p50':>8}{'get p95':>8}{'CPU %':>6}{'µs/ev':>7}{'RSS MB':>7}"
        f"{'load':>6}{'bench %':>8}{'tok/ev':>7}{'turns':>6}{'sys %':>6}"
    )
    for name, r in runs.items():
        print(
            f"  {name:14}{r['events']:>9,.0f}{r['events_s']:>7,.0f}{r['p50']:>8.2f}"
            f"{r['p95']:>8.2f}{r['p99']:>8.2f}{r['polls']:>8,.0f}{r['poll_p50']:>8.1f}"
            f"{r['poll_p95']:>8.1f}{r['cpu_pct']:>6.0f}{r['cpu_us_event']:>7.0f}{r['rss']:>7.0f}"
            f"{r['load']:>6.1f}{r['own_pct']:>8.0f}{r['per_frame']:>7.1f}{r['turns']:>6,.0f}{r['sys_share']:>6.0f}"
        )
    print(
        "  daemon RSS MB over each run (at its start, 1/4, 1/2, 3/4, end): "
        + "; ".join(
            f"{name} " + " / ".join(f"{v:.0f}" for v in r["rss_path"]) for name, r in runs.items()
        )
    )
    for name, r in runs.items():
        print(
            f"  {name}: view process CPU {r['view_pct']:.0f}% of one core (its start "
            f"included); daemon + view process peak RSS {r['tree_rss']:.0f} MB, "
            f"PSS {r['tree_pss']:.0f} MB"
        )
    print_stalls(runs)
    for r in runs.values():
        for line in r["phases"]:
            print(line)
    if len(runs) < 2:
        return
    alone, busy = runs["alone"], runs["with pollers"]
    print(
        f"  with pollers / alone: p50 ×{busy['p50'] / max(alone['p50'], 1e-9):.2f}, "
        f"p95 ×{busy['p95'] / max(alone['p95'], 1e-9):.2f}, daemon CPU per event "
        f"×{busy['cpu_us_event'] / max(alone['cpu_us_event'], 1e-9):.2f}"
    )
    warm = busy.get("view_ready_s")
    print(
        f"  (each poller's first ctx/get, not counted above: at most {busy['cold_max']:,.0f} ms"
        + (
            f"; the view process ran {warm:.1f} s after the first, and the window opened once it "
            "had answered each session"
            if warm is not None
            else ""
        )
        + ")"
    )
    print(
        "  (events: deltas as the stream server sent them, each stamped; tok/ev: how many "
        "the daemon sent in one delta event)"
    )


def open_loop(args: argparse.Namespace) -> None:
    """``--rate``: the polling runs at fixed offered loads, each rate once per connection
    mode (``--connections both``: kept and closed alternated at every rate, the same
    events per second offered to both), so what kept connections do to latency is seen
    apart from how much more they let the closed loop carry."""
    rates = [float(r) for r in args.rate.split(",")]
    modes = {"both": [True, False], "kept": [True], "closed": [False]}[args.connections]
    pollers = [0] if args.only == "alone" else [args.pollers] if args.only else [0, args.pollers]
    print(
        f"open loop: {args.clients} clients on {args.sessions} sessions of {args.history} "
        f"messages, {args.tokens} deltas per turn, turns on a fixed schedule at "
        f"{', '.join(f'{r:,.0f}' for r in rates)} delta events/s offered, {args.seconds:.0f} s "
        f"each; {' and '.join(f'{n} pollers' if n else 'alone' for n in pollers)}"
    )
    runs: dict[str, dict[str, Any]] = {}
    by_rate: dict[tuple[float, int], dict[bool, dict[str, Any]]] = {}
    for rate in rates:
        for n in pollers:
            for kept in modes:
                name = f"{rate:,.0f} {'kept' if kept else 'closed'}{f' +{n}p' if n else ''}"
                runs[name] = polling_run(args, n, None, keep_alive=kept, rate=rate)
                by_rate.setdefault((rate, n), {})[kept] = runs[name]
                _print_open(name, runs[name], header=len(runs) == 1)
    print_stalls(runs)
    for (rate, n), pair in by_rate.items():
        if len(pair) == 2:
            kept, closed = pair[True], pair[False]
            print(
                f"  kept / closed at {rate:,.0f} ev/s{f' with {n} pollers' if n else ''}: "
                f"p50 ×{kept['p50'] / max(closed['p50'], 1e-9):.2f}, "
                f"p95 ×{kept['p95'] / max(closed['p95'], 1e-9):.2f}, "
                f"p99 ×{kept['p99'] / max(closed['p99'], 1e-9):.2f}, µs per event "
                f"×{kept['cpu_us_event'] / max(closed['cpu_us_event'], 1e-9):.2f}"
                + _unequal(kept, closed)
            )
    print(
        "  (offered: every slot's turn to every client of its session, per second of the "
        "window; carried: received within it; late: turns whose slot came while the "
        "previous still ran, started when it ended; start lag: a turn's start after its "
        "slot; turn ms: send to done, p50; lag: the measuring loop's 5 ms tick, p99)"
    )


def _unequal(kept: dict[str, Any], closed: dict[str, Any]) -> str:
    """A warning when the two runs did not carry the same load (one fell behind its
    schedule): their latencies then differ by what they carried, not by the connection."""
    low, high = sorted((kept["carried_s"], closed["carried_s"]))
    if high <= 0 or low / high >= 0.95:
        return ""
    return (
        f"  (NOT equal load: carried {kept['carried_s']:,.0f} kept / "
        f"{closed['carried_s']:,.0f} closed)"
    )


def _print_open(name: str, r: dict[str, Any], header: bool) -> None:
    if header:
        print(
            f"  {'':18}{'offered':>8}{'carried':>8}{'late':>10}{'start ms':>9}{'p50 ms':>8}"
            f"{'p95 ms':>8}{'p99 ms':>8}{'get p50':>8}{'get p95':>8}{'CPU %':>6}{'µs/ev':>7}"
            f"{'tok/ev':>7}{'turn ms':>8}{'RSS MB':>7}{'load':>6}{'lag ms':>7}"
        )
    late = f"{r['late']}/{r['slots']}"
    print(
        f"  {name:18}{r['offered_s']:>8,.0f}{r['carried_s']:>8,.0f}{late:>10}"
        f"{r['start_p50']:>9.1f}{r['p50']:>8.2f}"
        f"{r['p95']:>8.2f}{r['p99']:>8.2f}{r['poll_p50']:>8.1f}{r['poll_p95']:>8.1f}"
        f"{r['cpu_pct']:>6.0f}{r['cpu_us_event']:>7.0f}{r['per_frame']:>7.1f}{r['turn_p50']:>8.0f}"
        f"{r['rss']:>7.0f}{r['load']:>6.1f}{r['bench_lag_p99']:>7.1f}",
        flush=True,
    )


def print_stalls(runs: dict[str, dict[str, Any]]) -> None:
    """The daemon's stall report of each run (``--stalls``): how late its loop ran, why."""
    for name, r in runs.items():
        report = r.get("stalls")
        if report is None:
            continue
        hist = "  ".join(f"{k}:{v}" for k, v in report["histogram"].items() if v)
        print(
            f"  stalls ({name}): {report['stalls']:,} of {report['ticks']:,} ticks late "
            f">= {report['stall_ms']:.0f} ms, {report['stalled_ms']:,.0f} ms in all; ms: {hist}"
        )
        for cause in report["causes"][:6]:
            print(
                f"    {cause['name'][:54]:54} {cause['count']:>6,}  {cause['total_ms']:>9,.1f} ms"
                f"  max {cause['max_ms']:>7.1f}  loop CPU {cause['loop_cpu_ms']:>8,.1f} ms"
            )
        gens = report["gc"]["by_generation"]
        print(
            "    gc: "
            + "  ".join(
                f"{g} {t['count']:,}× {t['total_ms']:,.0f} ms (CPU {t.get('cpu_ms', 0):,.0f}, "
                f"max {t['max_ms']:.1f})"
                for g, t in gens.items()
            )
            + f"; off the loop {report['gc']['off_loop']:,}; threshold "
            f"{tuple(report['gc']['threshold'])}, frozen {report['gc']['frozen']:,}, "
            f"tracked at the stop {report['gc']['tracked']:,}"
        )


def idle(args: argparse.Namespace) -> None:
    home = Path(tempfile.mkdtemp(prefix="bonsai-idle-"))
    proc, _ = start_daemon(home, 9)
    client = DaemonClient.connect(home, start=False)
    baseline = rss_mb(proc.pid)
    chunk = "lorem ipsum dolor sit amet " * 370  # ~2,000 tokens
    for _ in range(args.idle_sessions):
        sid = client.request("bonsai/session/create", {"workspace": str(home)})["sessionId"]
        for _ in range(25):
            client.request(
                "bonsai/session/append", {"sessionId": sid, "role": "user", "content": chunk}
            )
        client.request("bonsai/session/attach", {"sessionId": sid})
    loaded = rss_mb(proc.pid)
    print(
        f"idle: {args.idle_sessions} sessions of ~50k tokens attached: RSS {loaded:.0f} MB "
        f"(empty daemon {baseline:.0f} MB)"
    )
    client.request("bonsai/daemon/stop")
    proc.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=200)
    parser.add_argument("--idle-sessions", type=int, default=100)
    parser.add_argument("--polling", action="store_true", help="the polling comparison only")
    parser.add_argument("--pollers", type=int, default=10)
    parser.add_argument("--poll-ms", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--history", type=int, default=20, help="messages per session (polling)")
    parser.add_argument("--profile", help="write a cProfile of the daemon's loop thread here")
    parser.add_argument(
        "--profile-run",
        choices=["alone", "pollers"],
        default="pollers",
        help="which run --profile profiles",
    )
    parser.add_argument("--only", choices=["alone", "pollers"], help="one of the two runs")
    parser.add_argument(
        "--stalls", action="store_true", help="the daemon's stall monitor on (BONSAI_STALLS)"
    )
    parser.add_argument("--gc-policy", help="the daemon's BONSAI_GC_POLICY (default: its own)")
    parser.add_argument(
        "--cold",
        action="store_true",
        help="open the measured window at once (the view process starting within it), as "
        "before the eighth round",
    )
    parser.add_argument(
        "--trace",
        action="store_true",
        help="the daemon stamps every ctx/get (BONSAI_CTX_TRACE): its time by phase",
    )
    parser.add_argument(
        "--rate",
        help="open loop (with --polling): turns on a fixed schedule offering this many delta "
        "events per second; a comma-separated list runs each",
    )
    parser.add_argument(
        "--connections",
        choices=["both", "kept", "closed"],
        default="both",
        help="open loop: the stream server's connections, kept and closed alternated by default",
    )
    parser.add_argument(
        "--no-keep-alive",
        action="store_true",
        help="the stream server closes each connection after its reply (a new one per turn)",
    )
    args = parser.parse_args()
    if args.polling:
        polling(args)
        return
    streaming(args)
    idle(args)


if __name__ == "__main__":
    main()
