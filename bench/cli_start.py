"""How long a ``bonsai`` command takes to its first output, in a fresh process.

Issue 26's aim: ``bonsai --version``, ``status`` (daemon running and not), ``ctx`` and
``repomap`` on a warm cache reach their first output in ≤ 0.3 s. Each command runs
``--runs`` times in a fresh interpreter (the console script's own: ``python -m bonsai``);
the time is from the spawn to the first byte on stdout or stderr, and the process's CPU
time when it ended. A daemon is started once for the "running" commands (a fresh home,
one session), and the repository map is built once before its warm runs.

    python bench/cli_start.py [--runs 10] [--repo DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def first_output(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(seconds to the first byte of output, CPU seconds of the whole run)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "bonsai", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    select.select([proc.stdout, proc.stderr], [], [], 60)
    took = time.perf_counter() - began
    proc.communicate(timeout=120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return took, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--repo", type=Path, default=HERE / "server" / "bonsai")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bonsai-cli-") as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("BONSAI_")}
        env.update(BONSAI_HOME=str(Path(tmp) / "home"), BONSAI_PROVIDER="sim")
        env.setdefault("PYTHONPATH", str(HERE / "server"))
        cases: list[tuple[str, list[str]]] = [
            ("--version", ["--version"]),
            ("status (no daemon)", ["status", "--no-start"]),
        ]
        repo = ["repomap", str(args.repo), "--tokens", "1024"]
        subprocess.run([sys.executable, "-m", "bonsai", *repo], env=env, capture_output=True)
        cases.append(("repomap (warm cache)", repo))
        rows = {name: [first_output(argv, env) for _ in range(args.runs)] for name, argv in cases}
        subprocess.run([sys.executable, "-m", "bonsai", "status"], env=env, capture_output=True)
        make = (
            "import os,sys; from pathlib import Path; from bonsai.cli.client import DaemonClient;"
            "c=DaemonClient.connect(Path(os.environ['BONSAI_HOME']));"
            "c.request('bonsai/session/create', {'workspace': os.getcwd()})"
        )
        made = subprocess.run([sys.executable, "-c", make], env=env, capture_output=True)
        assert made.returncode == 0, made.stderr
        for name, argv in (("status (daemon running)", ["status"]), ("ctx", ["ctx"])):
            rows[name] = [first_output(argv, env) for _ in range(args.runs)]
        subprocess.run([sys.executable, "-m", "bonsai", "stop"], env=env, capture_output=True)
    with open("/proc/loadavg") as f:
        print(f"load {f.read().split()[0]}, {args.runs} runs each, medians:")
    for name, results in rows.items():
        wall = statistics.median(r[0] for r in results)
        cpu = statistics.median(r[1] for r in results)
        print(f"  {name:26} first output {wall:.3f} s, CPU {cpu:.3f} s")
    print(json.dumps({k: [round(r[0], 3) for r in v] for k, v in rows.items()}))


if __name__ == "__main__":
    main()
