"""How long ``bonsai serve --stdio`` takes to answer ``initialize``, and what it holds then.

Every test spawns daemons, so this is also the test suite's time. Each start is a
fresh home (as in the tests): the interpreter, the imports, the store created, the
first ``initialize`` answered. Reported per start: the wall time from the spawn to
the answer, the daemon's CPU time and RSS at that moment (``/proc``), and the time
until it has exited once its client went away (stdin closed). ``--server DIR``
(repeatable) runs the daemon from another checkout's ``server`` folder, the starts
alternated so that every variant sees the same machine; the median of each is printed.

    python bench/daemon_start.py [--starts 10] [--server DIR ...] [--settle-s 0]

``--settle-s S`` waits S seconds after the answer before reading the RSS again (what
the start leaves running in the background), reported as ``rss_settled_mb`` and
``cpu_settled_s``.

Each server's modules are compiled to bytecode first, as an installed package's are:
with ``PYTHONDONTWRITEBYTECODE`` set (as on these machines) a checkout without
``__pycache__`` would otherwise compile every module from source at every start
(~1 s of CPU), and the comparison would be of that.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from proc_tree import cpu_of, rss_mb

HERE = Path(__file__).resolve().parents[1] / "server"


def _frame(body: dict[str, object]) -> bytes:
    data = json.dumps(body).encode()
    return b"Content-Length: %d\r\n\r\n" % len(data) + data


def _read_frame(stream: object) -> dict[str, object]:
    length = 0
    while True:
        line = stream.readline()  # type: ignore[attr-defined]
        if not line:
            raise SystemExit("the daemon closed its output before answering")
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return dict(json.loads(stream.read(length)))  # type: ignore[attr-defined]


def one_start(server: Path, settle_s: float) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bonsai-start-") as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("BONSAI_")}
        env.update({"BONSAI_HOME": str(Path(tmp) / "home"), "PYTHONPATH": str(server)})
        began = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "bonsai", "serve", "--stdio"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        assert proc.stdin is not None and proc.stdout is not None
        init = {"processId": os.getpid(), "capabilities": {}}
        proc.stdin.write(
            _frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
        )
        proc.stdin.flush()
        while "id" not in (answer := _read_frame(proc.stdout)):
            pass
        took = time.perf_counter() - began
        out = {"initialize_s": took, "cpu_s": cpu_of(proc.pid), "rss_mb": rss_mb(proc.pid)}
        if settle_s > 0:
            time.sleep(settle_s)
            out["rss_settled_mb"] = rss_mb(proc.pid)
            out["cpu_settled_s"] = cpu_of(proc.pid)
        closing = time.perf_counter()
        proc.stdin.close()
        proc.wait(timeout=60)
        out["exit_s"] = time.perf_counter() - closing
        assert "result" in answer, answer
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--server", action="append", type=Path, default=[])
    parser.add_argument("--settle-s", type=float, default=0.0)
    args = parser.parse_args()
    servers = [s.resolve() for s in args.server] or [HERE]
    for server in servers:
        compileall.compile_dir(server / "bonsai", quiet=2)  # skips what is current
    runs: dict[Path, list[dict[str, float]]] = {s: [] for s in servers}
    for _ in range(args.starts):
        for server in servers:
            runs[server].append(one_start(server, args.settle_s))
    with open("/proc/loadavg") as f:
        print(f"load {f.read().split()[0]}, {args.starts} starts each, medians:")
    for server, results in runs.items():
        fields = results[0].keys()
        line = ", ".join(f"{k} {statistics.median(r[k] for r in results):.3f}" for k in fields)
        print(f"{server}: {line}")


if __name__ == "__main__":
    main()
