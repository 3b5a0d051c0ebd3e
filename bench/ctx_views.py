"""What one ``bonsai/ctx/get`` costs the daemon: CPU milliseconds per answer, unchanged and changed.

One daemon, one session of ``--history`` messages of ~2,000 tokens. For each view
(ledger, wire, turns), the CPU time (``/proc``) per answer of the daemon and its view
process together, and the view process's share (``child``; the first answer starts the
view process, and the measures begin once it runs):

- **unchanged**: ``--gets`` answers in a row while nothing in the session moves (an
  open ledger polling an idle session);
- **after a write**: ``--writes`` rounds of one small appended message and one answer,
  less the CPU of the same appends without answers (an open ledger polling a session
  that is streaming: every step that commits moves the log);
- the wall-clock p50/p95 of the answers, as the client sees them (no other load).

    python bench/ctx_views.py [--history 20] [--gets 200] [--writes 40]
        [--against OTHER/server [--rounds 2]]

``--against`` runs the same measures on a daemon of another checkout's ``server``
folder (main's, say), alternated with this one's ``--rounds`` times in the same run,
and prints each run beside the other with the ratio of their medians.

Bounded: a fixed count of requests, loopback only, a few seconds on an idle machine.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from load_clients import AsyncClient, cpu_s
from proc_tree import cpu_of, cpu_of_task, view_children

CHUNK = "lorem ipsum dolor sit amet " * 370  # ~2,000 tokens


HERE = Path(__file__).resolve().parents[1] / "server"
MEASURES = ("unchanged_cpu", "unchanged_loop", "changed_cpu", "changed_child", "changed_loop")


def _start_daemon(home: Path, server: Path = HERE) -> subprocess.Popen[bytes]:
    env = {**os.environ, "BONSAI_HOME": str(home), "BONSAI_PROVIDER": "sim"}
    env["PYTHONPATH"] = str(server)  # whose daemon: this checkout's, or --against's
    env["BONSAI_MODEL"] = "gpt-4o-mini"
    env["BONSAI_BASE_URL"] = "http://127.0.0.1:9/v1"  # never asked: no turn runs here
    # one client here: the view process from the first view, as with several windows
    env.setdefault("BONSAI_VIEW_PROCESS", "1")
    proc = subprocess.Popen([sys.executable, "-m", "bonsai", "serve", "--socket", "auto"], env=env)
    os.environ.update(env)
    deadline = time.monotonic() + 30
    while not (home / "daemon.json").exists():
        if time.monotonic() > deadline or proc.poll() is not None:
            raise SystemExit("daemon did not start")
        time.sleep(0.05)
    return proc


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


async def _timed(client: AsyncClient, method: str, params: dict[str, Any]) -> float:
    started = time.perf_counter()
    await client.request(method, params)
    return (time.perf_counter() - started) * 1000


def _children_cpu(pid: int) -> float:
    return sum(cpu_of(kid) for kid in view_children(pid))


def _loop_cpu(pid: int) -> float:
    """The daemon's main thread (its event loop): not the count thread, not the child."""
    return cpu_of_task(pid, pid)


def _tree_cpu(pid: int) -> float:
    return cpu_s(pid) + _children_cpu(pid)


async def _view_process_running(client: AsyncClient) -> str:
    """Wait (bounded) until the daemon says its view process runs; what it says."""
    deadline = time.monotonic() + 120
    views = ""
    while time.monotonic() < deadline:
        views = str((await client.request("bonsai/daemon/status", {})).get("views", ""))
        if "running" in views or "thread" in views:
            break
        await asyncio.sleep(0.2)
    return views


async def _view(
    client: AsyncClient, pid: int, sid: str, view: str, gets: int, writes: int
) -> dict[str, float]:
    get = {"sessionId": sid, "view": view}
    append = {"sessionId": sid, "role": "user", "content": "one more line"}
    cold = await _timed(client, "bonsai/ctx/get", get)
    await _view_process_running(client)
    cpu0, loop0 = _tree_cpu(pid), _loop_cpu(pid)
    hot = [await _timed(client, "bonsai/ctx/get", get) for _ in range(gets)]
    unchanged = 1000 * (_tree_cpu(pid) - cpu0) / gets
    unchanged_loop = 1000 * (_loop_cpu(pid) - loop0) / gets
    cpu0, loop0 = _tree_cpu(pid), _loop_cpu(pid)
    for _ in range(writes):
        await client.request("bonsai/session/append", append)
    appends, appends_loop = _tree_cpu(pid) - cpu0, _loop_cpu(pid) - loop0
    cpu0, child0, loop0 = _tree_cpu(pid), _children_cpu(pid), _loop_cpu(pid)
    moved = []
    for _ in range(writes):
        await client.request("bonsai/session/append", append)
        moved.append(await _timed(client, "bonsai/ctx/get", get))
    changed = 1000 * max(0.0, _tree_cpu(pid) - cpu0 - appends) / writes
    child = 1000 * (_children_cpu(pid) - child0) / writes
    loop = 1000 * max(0.0, _loop_cpu(pid) - loop0 - appends_loop) / writes
    return {
        "cold": cold,
        "unchanged_cpu": unchanged,
        "unchanged_loop": unchanged_loop,
        "unchanged_p50": statistics.median(hot),
        "unchanged_p95": _pct(hot, 0.95),
        "changed_cpu": changed,
        "changed_child": child,
        "changed_loop": loop,
        "changed_p50": statistics.median(moved),
        "changed_p95": _pct(moved, 0.95),
    }


async def _run(args: argparse.Namespace, home: Path, pid: int) -> dict[str, dict[str, float]]:
    client = await AsyncClient.connect(home)
    out = {}
    for view in ("ledger", "wire", "turns"):
        sid = (await client.request("bonsai/session/create", {"workspace": str(home)}))["sessionId"]
        for n in range(args.history):
            role = "user" if n % 2 == 0 else "assistant"
            params = {"sessionId": sid, "role": role, "content": CHUNK}
            await client.request("bonsai/session/append", params)
        out[view] = await _view(client, pid, sid, view, args.gets, args.writes)
    await client.request("bonsai/daemon/stop")
    await client.close()
    return out


def _measure(args: argparse.Namespace, server: Path) -> tuple[dict[str, dict[str, float]], float]:
    """One daemon of ``server``'s code measured; its results and the machine's load."""
    home = Path(tempfile.mkdtemp(prefix="bonsai-views-"))
    proc = _start_daemon(home, server)
    load0 = os.getloadavg()[0]
    try:
        results = asyncio.run(_run(args, home, proc.pid))
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return results, (load0 + os.getloadavg()[0]) / 2


def _print(args: argparse.Namespace, results: dict[str, dict[str, float]], load: float) -> None:
    print(
        f"ctx/get on a session of {args.history} messages (~{2 * args.history}k tokens), "
        f"machine load {load:.1f}; CPU ms per answer (daemon + view process; child: the view "
        "process's; loop: the daemon's event-loop thread's), wall ms as the client sees it"
    )
    print(
        f"  {'view':8}{'cold ms':>9}{'same CPU':>10}{'loop':>7}{'p50':>7}{'p95':>7}"
        f"{'moved CPU':>11}{'child':>7}{'loop':>7}{'p50':>7}{'p95':>7}"
    )
    for view, r in results.items():
        print(
            f"  {view:8}{r['cold']:>9.1f}{r['unchanged_cpu']:>10.2f}{r['unchanged_loop']:>7.2f}"
            f"{r['unchanged_p50']:>7.2f}{r['unchanged_p95']:>7.2f}{r['changed_cpu']:>11.2f}"
            f"{r['changed_child']:>7.2f}{r['changed_loop']:>7.2f}{r['changed_p50']:>7.2f}"
            f"{r['changed_p95']:>7.2f}"
        )


def _compare(args: argparse.Namespace, other: Path) -> None:
    """This checkout's daemon and ``other``'s, alternated; each measure's medians and ratio."""
    runs: dict[str, list[dict[str, dict[str, float]]]] = {"other": [], "this": []}
    for n in range(args.rounds):
        order = (
            [("other", other), ("this", HERE)] if n % 2 == 0 else [("this", HERE), ("other", other)]
        )
        for name, server in order:
            results, load = _measure(args, server)
            print(f"[{name}: {server}]")
            _print(args, results, load)
            runs[name].append(results)
    print(f"medians of {args.rounds} runs each, CPU ms per answer: other -> this (this / other)")
    for view in ("ledger", "wire", "turns"):
        cells = []
        for measure in MEASURES:
            before = statistics.median(r[view][measure] for r in runs["other"])
            after = statistics.median(r[view][measure] for r in runs["this"])
            ratio = after / before if before else float("nan")
            cells.append(f"{measure} {before:.2f} -> {after:.2f} ({ratio:.2f}x)")
        print(f"  {view:7} " + "; ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--history", type=int, default=20, help="messages in the session")
    parser.add_argument("--gets", type=int, default=200, help="answers while nothing moves")
    parser.add_argument("--writes", type=int, default=40, help="rounds of append + answer")
    parser.add_argument("--against", type=Path, help="another checkout's server folder")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each with --against")
    args = parser.parse_args()
    if args.against is not None:
        if not (args.against / "bonsai" / "__init__.py").is_file():
            raise SystemExit(f"--against {args.against}: no bonsai package there")
        _compare(args, args.against.resolve())
        return
    results, load = _measure(args, HERE)
    _print(args, results, load)


if __name__ == "__main__":
    main()
