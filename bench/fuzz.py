"""Fuzz benchmark: 10,000+ hypothesis-generated messages against one live daemon.

Runs the strategies of ``tests/reliability/test_fuzz.py`` (requests for every
method of the table with random, wrongly typed, missing, extra, huge and deeply
nested params; unknown and LSP methods; notifications; bad bodies; broken
frames) over the daemon's unix socket, each followed by a bystander
``bonsai/daemon/status``. Unlike the test it does not stop at the first
failure: it records every broken property and prints them at the end.

Prints messages/s beside a baseline (plain status requests through the same
connect-send-check loop, measured in the same run), answers by error code,
requests by method, the daemon's RSS and every failure found.

    python bench/fuzz.py [--messages 10000] [--budget-s 600] [--seed 12]

Bounded: a message count and a time budget; unix socket and loopback only.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "server"), str(ROOT / "tests")]

from hypothesis import given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from bonsai.sim import Script  # noqa: E402
from bonsai.sim.runner import SimulatorThread  # noqa: E402
from bonsai.sim.script import Reply, Rule  # noqa: E402
from bonsai_testing import bonsai_env  # noqa: E402
from reliability import test_fuzz as fz  # noqa: E402
from reliability.raw_client import DaemonProcess, Raw, request  # noqa: E402

Check = Callable[[fz.Rig, Any], list[dict[str, Any]]]
SHARES = {"requests": 0.70, "notifications": 0.10, "bad bodies": 0.12, "broken frames": 0.08}


@dataclass
class Tally:
    sent: int = 0
    codes: collections.Counter[str] = field(default_factory=collections.Counter)
    methods: collections.Counter[str] = field(default_factory=collections.Counter)
    failures: list[str] = field(default_factory=list)
    deadline: float = 0.0
    seconds: dict[str, float] = field(default_factory=lambda: collections.defaultdict(float))
    slowest: list[tuple[float, str]] = field(default_factory=list)


class Recorder:
    """Wraps the test's checks: count answers, record failures, never stop."""

    def __init__(self, rig: fz.Rig, tally: Tally) -> None:
        self.rig, self.tally = rig, tally

    def run(self, kind: str, check: Check, case: Any) -> None:
        if time.monotonic() > self.tally.deadline:
            return
        self.tally.sent += 1
        if self.tally.sent % 1000 == 0:
            self._progress()
        label = case.method if isinstance(case, fz.Case) else kind
        self.tally.methods[label] += 1
        start = time.perf_counter()
        try:
            self._count(check(self.rig, case))
            fz.check_bystander(self.rig)
            took = time.perf_counter() - start
            self.tally.seconds[label] += took
            self.tally.slowest = sorted([*self.tally.slowest, (took, repr(case)[:160])])[-5:]
        except (AssertionError, OSError, ConnectionError) as error:
            text = f"{kind}: {type(error).__name__}: {str(error)[:400]} -- {case!r}"[:800]
            self.tally.failures.append(text)
            print(f"FAILURE {text}", file=sys.stderr, flush=True)
            if not self.rig.daemon.alive():
                print(f"the daemon died; home: {self.rig.daemon.home}\n{text}", file=sys.stderr)
                raise SystemExit(2) from None
            self._reset_bystander()

    def _progress(self) -> None:
        now = time.monotonic()
        last = getattr(self, "_last", None)
        self._last = now
        rate = f"{1000 / (now - last):.1f} msg/s" if last else "started"
        rss = self.rig.daemon.rss_mb()
        print(f"  {self.tally.sent:>6,} sent: {rate}, daemon RSS {rss:.0f} MB", file=sys.stderr)

    def _count(self, answers: list[dict[str, Any]]) -> None:
        if not answers:
            self.tally.codes["(no answer)"] += 1
        for answer in answers:
            error = answer.get("error")
            self.tally.codes[str(error.get("code")) if isinstance(error, dict) else "result"] += 1

    def _reset_bystander(self) -> None:
        self.rig.bystander.close()
        self.rig.bystander = Raw(self.rig.daemon.socket, fz.TIMEOUT_S)


def fuzz(rig: fz.Rig, total: int, run_seed: int, tally: Tally) -> None:
    recorder = Recorder(rig, tally)
    targets = rig.targets
    plan: list[tuple[str, st.SearchStrategy[Any], Check]] = [
        ("requests", fz.request_cases(targets), fz.check_request),
        ("notifications", fz.notification_cases(targets), fz.check_request),
        ("bad bodies", fz.bad_bodies(), fz.check_bad_body),
        ("broken frames", fz.broken_frames(), fz.check_broken_frame),
    ]
    for kind, strategy, check in plan:
        count = max(1, round(total * SHARES[kind]))
        run_kind(recorder, kind, strategy, check, count, run_seed)


def run_kind(
    recorder: Recorder,
    kind: str,
    strategy: st.SearchStrategy[Any],
    check: Check,
    count: int,
    at: int,
) -> None:
    @seed(at)
    @settings(fz.FUZZ, derandomize=False, max_examples=count)
    @given(case=strategy)
    def go(case: Any) -> None:
        recorder.run(kind, check, case)

    go()


def baseline(rig: fz.Rig, count: int) -> float:
    """Status requests through the same loop: connect, send, collect, bystander."""
    start = time.perf_counter()
    for i in range(count):
        with Raw(rig.daemon.socket, fz.TIMEOUT_S) as raw:
            raw.send(request(i, "bonsai/daemon/status"))
            fz.collect(raw, i)
        fz.check_bystander(rig)
    return count / (time.perf_counter() - start)


def start_rig(root: Path, sim: SimulatorThread, random_paths: bool) -> fz.Rig:
    home, sandbox = root / "home", root / "sandbox"
    home.mkdir()
    sandbox.mkdir()
    (sandbox / "AGENTS.md").write_text("# Notes\nBe brief.\n")
    (sandbox / "app.py").write_text("def answer():\n    return 42\n")
    env = bonsai_env(
        home,
        BONSAI_PROVIDER="sim",
        BONSAI_BASE_URL=sim.openai_base_url,
        BONSAI_MODEL="gpt-4o-mini",
        BONSAI_MEMORY_EMBEDDINGS="off",
    )
    daemon = DaemonProcess(home, env, cwd=sandbox)
    bystander = Raw(daemon.socket, fz.TIMEOUT_S)
    targets = fz._setup_sessions(bystander, sandbox)
    targets = dataclasses.replace(targets, random_paths=random_paths)
    return fz.Rig(daemon, bystander, targets, root)


def report(
    tally: Tally, rate: float, base: float, elapsed: float, rss: tuple[float, float]
) -> None:
    print(f"messages sent        {tally.sent:,} in {elapsed:.1f} s")
    print(f"fuzz messages/s      {rate:,.1f}")
    print(f"baseline messages/s  {base:,.1f} (plain status, same loop)")
    print(f"ratio fuzz/baseline  {rate / base:.2f}")
    print(f"daemon RSS           {rss[0]:.0f} MB now, {rss[1]:.0f} MB peak")
    print("answers by code:")
    for code, count in sorted(tally.codes.items()):
        print(f"  {code:>28}  {count:,}")
    print("time by method (top 8):")
    for method, seconds in sorted(tally.seconds.items(), key=lambda kv: -kv[1])[:8]:
        count = tally.methods[method]
        print(f"  {method or '(empty)':>28}  {count:,} sent, {seconds:.1f} s")
    print("slowest examples:")
    for took, case in reversed(tally.slowest):
        print(f"  {took:6.2f} s  {case}")
    print(f"failures found       {len(tally.failures)}")
    for text, count in collections.Counter(tally.failures).most_common(50):
        print(f"  - ({count}x) " + text.replace("\n", " "))


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--budget-s", type=float, default=600.0)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--baseline", type=int, default=300)
    parser.add_argument(
        "--fixed-paths",
        action="store_true",
        help="three fixed workspaces only (keeps per-workspace services from piling up)",
    )
    return parser.parse_args()


def main() -> int:
    args = parse_args()
    script = Script(rules=[Rule(match="", reply=Reply(text="ok"))])
    tmp = Path(tempfile.mkdtemp(prefix="bonsai-fuzz-"))
    with SimulatorThread(script) as sim:
        rig = start_rig(tmp, sim, random_paths=not args.fixed_paths)
        try:
            base = baseline(rig, args.baseline)
            tally = Tally(deadline=time.monotonic() + args.budget_s)
            start = time.perf_counter()
            fuzz(rig, args.messages, args.seed, tally)
            elapsed = time.perf_counter() - start
            rss = (rig.daemon.rss_mb(), rig.daemon.peak_rss_mb())
            try:
                fz.assert_contained(rig)
            except AssertionError as error:
                tally.failures.append(f"containment: {error}")
        finally:
            rig.bystander.close()
            code = rig.daemon.stop()
        if code != 0:
            tally.failures.append(f"the daemon exited with code {code}")
        report(tally, tally.sent / elapsed, base, elapsed, rss)
        print(json.dumps({"sent": tally.sent, "failures": len(tally.failures)}))
    if tally.failures:
        print(f"kept for inspection: {tmp} (daemon log in home/logs/)")
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
