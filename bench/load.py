"""Load benchmark: many clients, many sessions streaming at once (loopback only).

N clients attach to S sessions (two or more clients per session) on one daemon;
every session runs turns against a loopback stream server whose deltas carry
their send time, so each client measures token → receipt latency exactly.
Reports events/s, latency p50/p95/p99, daemon CPU and RSS; then the RSS of a
daemon holding 100 idle sessions of ~50k tokens each.

    python bench/load.py [--clients 20] [--sessions 10] [--turns 3] [--tokens 200]

Bounded: a fixed number of turns, a deadline, loopback addresses only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from bonsai.cli.client import DaemonClient

DEADLINE_S = 300


# ----------------------------------------------------------------- timestamped SSE server
async def _handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, tokens: int) -> None:
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        (
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        ),
        0,
    )
    await reader.readexactly(length)
    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n")
    for _ in range(tokens):
        chunk = {
            "id": "x",
            "object": "chat.completion.chunk",
            "model": "gpt-4o-mini",
            "choices": [
                {"index": 0, "delta": {"content": f"[{time.time():.6f}]"}, "finish_reason": None}
            ],
        }
        writer.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
        await writer.drain()
        await asyncio.sleep(0.002)
    end = {
        "id": "x",
        "object": "chat.completion.chunk",
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": tokens, "total_tokens": 100 + tokens},
    }
    writer.write(b"data: " + json.dumps(end).encode() + b"\n\ndata: [DONE]\n\n")
    await writer.drain()
    writer.close()


def start_stream_server(tokens: int) -> int:
    ready: dict[str, int] = {}
    started = threading.Event()

    def run() -> None:
        async def main() -> None:
            server = await asyncio.start_server(lambda r, w: _handle(r, w, tokens), "127.0.0.1", 0)
            ready["port"] = server.sockets[0].getsockname()[1]
            started.set()
            await server.serve_forever()

        asyncio.run(main())

    threading.Thread(target=run, daemon=True).start()
    started.wait(10)
    return ready["port"]


# ----------------------------------------------------------------- helpers
def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def start_daemon(home: Path, port: int) -> tuple[subprocess.Popen[bytes], dict[str, str]]:
    env = {
        **os.environ,
        "BONSAI_HOME": str(home),
        "BONSAI_PROVIDER": "sim",
        "BONSAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
        "BONSAI_MODEL": "gpt-4o-mini",
    }
    proc = subprocess.Popen([sys.executable, "-m", "bonsai", "serve", "--socket", "auto"], env=env)
    os.environ.update(env)
    deadline = time.monotonic() + 30
    while not (home / "daemon.json").exists():
        if time.monotonic() > deadline:
            raise SystemExit("daemon did not start")
        time.sleep(0.05)
    return proc, env


# ----------------------------------------------------------------- the streaming run
def client_loop(
    home: Path, sid: str, send: bool, turns: int, lat: list[float], done: list[int]
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
    for _ in range(turns):
        if send:
            turn = client.request("bonsai/chat/send", {"sessionId": sid, "text": "go"})["turnId"]
        target = len(finished) + 1
        while len(finished) < target and time.monotonic() < deadline:
            client.pump()
        if send:
            assert turn in finished
    done.append(1)
    client.close()


def streaming(args: argparse.Namespace) -> None:
    port = start_stream_server(args.tokens)
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
    args = parser.parse_args()
    streaming(args)
    idle(args)


if __name__ == "__main__":
    main()
