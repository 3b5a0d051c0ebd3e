"""Benchmark: bonsai's first-token and streaming path against the official
``openai`` SDK, on the same real server, in one run.

Starts llama.cpp's ``llama-server`` serving SmolLM2-135M-Instruct on loopback
behind a timing relay (``bench/timing_proxy.py``, its own process: it stamps
when each request reaches it and when the server's first byte comes back), then
runs, strictly interleaved (A B C, C B A, A B C, …, so load drift cancels):

A. the official ``openai`` SDK (``AsyncOpenAI().chat.completions.create(stream=True)``),
   the baseline;
B. bonsai's provider client (``OpenAIChatProvider.stream``: body, httpx, SSE
   framing, decoding into provider events), the streaming path of every step;
C. a whole bonsai turn through the daemon (``bonsai/chat/send`` on a fresh
   session over the daemon's socket, to the first ``delta`` notification and to
   ``done``): assembly, the session's bookkeeping, the provider, event publish.

For each it reports medians of: time to first token; *pre-send* (call → the
whole request at the relay: what the client does before the server can start);
*server* (request → the first chunk carrying text passing the relay: prompt
evaluation and the first token); *after* (that chunk → the first token in the
caller's hands: SSE parsing, decoding, and for C the event
publish to the client); the total; and CPU time (this process for A and B, the
daemon's for C). bonsai vs the SDK is given as the median of the paired
differences (each pair ran back to back). A and B send the same request (greedy,
fixed seed); C sends bonsai's own (system rules, tools, the question), so its
server time differs and only its pre-send and after figures compare. The server
runs two slots (4,096 tokens each) so C's prompt never evicts A and B's cached one.

Run: .venv/bin/python bench/real_server.py [--runs 15] [--max-tokens 64]
(needs ``sh tests/real_server/setup.sh`` first).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from openai import AsyncOpenAI

from bonsai.domain import Message
from bonsai.services.providers.openai_chat import OpenAIChatProvider
from bonsai.services.providers.transport import TransportOptions
from bonsai.services.providers.types import ChatRequest, SystemBlock, TextDelta

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load_clients import AsyncClient

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / ".tools" / "llama"
MODEL = "smollm2-135m"
SYSTEM = "You are a concise assistant. Answer in plain prose."
QUESTION = "Explain in a few sentences what a context window is for a language model."


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def llama_server() -> Iterator[str]:
    binary = TOOLS / "bin" / "llama-server"
    models = sorted((TOOLS / "venv").glob("lib/python*/site-packages/**/SmolLM2-135M*.gguf"))
    if not binary.exists() or not models:
        sys.exit("llama-server or the model is missing: run sh tests/real_server/setup.sh")
    port = _free_port()
    log = Path(tempfile.mkdtemp(prefix="bench-llama-")) / "llama-server.log"
    command = [
        str(binary), "--model", str(models[0]), "--alias", MODEL, "--host", "127.0.0.1",
        "--port", str(port), "--ctx-size", "8192", "--parallel", "2", "--threads", "1",
    ]  # fmt: skip
    handle = log.open("wb")
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}  # no spinning threads on a shared CPU
    process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.3)
        else:
            sys.exit(f"llama-server did not start; see {log}")
        yield base
    finally:
        process.terminate()
        process.wait(timeout=15)
        handle.close()


class Relay:
    """The timing relay in its own process; its stamps, read by a thread."""

    def __init__(self, upstream: str) -> None:
        port = int(upstream.rsplit(":", 1)[1].split("/")[0])
        script = Path(__file__).with_name("timing_proxy.py")
        self.process = subprocess.Popen(
            [sys.executable, str(script), str(port)], stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        first = self.process.stdout.readline().split()
        self.base_url = f"http://127.0.0.1:{first[1]}/v1"
        self.stamps: list[tuple[str, float, str]] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            parts = line.split()
            with self._lock:
                self.stamps.append((parts[0], float(parts[1]), parts[2] if len(parts) > 2 else ""))

    def last_chat(self, since: float) -> tuple[float, float]:
        """(request reached the relay, first text chunk passed it) of the last chat request."""
        time.sleep(0.01)  # the reader thread catches up
        with self._lock:
            stamps = [s for s in self.stamps if s[1] >= since]
        req = resp = 0.0
        for i, (kind, at, path) in enumerate(stamps):
            if kind == "req" and path.endswith("/chat/completions"):
                req = at  # the request is complete at its last chunk before the reply
                for later_kind, later_at, _ in stamps[i + 1 :]:
                    if later_kind == "more":
                        req = later_at
                    elif later_kind in ("resp", "req"):
                        break
                resp = next((t for k, t, _ in stamps[i + 1 :] if k == "tok"), 0.0)
        return req, resp

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


@dataclass
class Sample:
    start: float  # time.time() at the call
    first: float  # first token in the caller's hands
    end: float
    cpu_s: float
    tokens: int
    req: float = 0.0
    resp: float = 0.0

    @property
    def ttft_ms(self) -> float:
        return (self.first - self.start) * 1000

    @property
    def total_ms(self) -> float:
        return (self.end - self.start) * 1000

    @property
    def pre_send_ms(self) -> float:
        return (self.req - self.start) * 1000

    @property
    def server_ms(self) -> float:
        return (self.resp - self.req) * 1000

    @property
    def after_ms(self) -> float:
        return (self.first - self.resp) * 1000


@dataclass
class Series:
    name: str
    samples: list[Sample] = field(default_factory=list)

    def median(self, attr: str) -> float:
        return statistics.median(getattr(s, attr) for s in self.samples)


def cpu_of(pid: int | None = None) -> float:
    if pid is None:
        return time.process_time()
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def via_sdk(client: AsyncOpenAI, max_tokens: int) -> Sample:
    start, cpu = time.time(), cpu_of()
    first, tokens = 0.0, 0
    stream = await client.chat.completions.create(
        model=MODEL,
        messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION}],
        max_tokens=max_tokens,
        temperature=0.0,
        seed=7,
        stream=True,
        stream_options={"include_usage": True},
    )
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            tokens += 1
            first = first or time.time()
    return Sample(start, first, time.time(), cpu_of() - cpu, tokens)


async def via_bonsai(provider: OpenAIChatProvider, max_tokens: int) -> Sample:
    request = ChatRequest(
        model=MODEL,
        system=[SystemBlock(text=SYSTEM)],
        messages=[Message(role="user", content=QUESTION)],
        max_tokens=max_tokens,
        temperature=0.0,
    )
    start, cpu = time.time(), cpu_of()
    first, tokens = 0.0, 0
    async for event in provider.stream(request):
        if isinstance(event, TextDelta):
            tokens += 1
            first = first or time.time()
    return Sample(start, first, time.time(), cpu_of() - cpu, tokens)


class DaemonPath:
    """A bonsai daemon pointed at the relay; one fresh session per run."""

    def __init__(self, base_url: str, max_tokens: int, profile: str | None = None) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="bench-real-daemon-"))
        self.home, self.workspace = self.dir / "home", self.dir / "ws"
        self.home.mkdir(mode=0o700)
        self.workspace.mkdir()
        config = {"context": {"output_reserve": max_tokens}}
        (self.home / "config.json").write_text(json.dumps(config))
        env = {
            **os.environ,
            "BONSAI_HOME": str(self.home),
            "BONSAI_PROVIDER": "openai-compatible",
            "BONSAI_BASE_URL": base_url,
            "BONSAI_MODEL": MODEL,
        }
        runner = [str(Path(__file__).with_name("profiled_daemon.py")), profile] if profile else []
        command = [sys.executable, *(runner or ["-m", "bonsai"]), "serve", "--socket", "auto"]
        self.process = subprocess.Popen(command, env=env)
        deadline = time.monotonic() + 30
        while not (self.home / "daemon.json").exists():
            if time.monotonic() > deadline:
                raise SystemExit("the bonsai daemon did not start")
            time.sleep(0.05)
        self.client: AsyncClient | None = None
        self.events: dict[str, list[tuple[str, float]]] = {}
        self.done: dict[str, asyncio.Event] = {}

    async def connect(self) -> None:
        self.client = await AsyncClient.connect(self.home)

        def on_event(method: str, params: dict[str, Any], at: float) -> None:
            if method != "bonsai/chat/event":
                return
            turn = str(params.get("turnId"))
            self.events.setdefault(turn, []).append((str(params.get("kind")), at))
            if params.get("kind") in ("done", "error"):
                self.done.setdefault(turn, asyncio.Event()).set()

        self.client.on_notification = on_event

    async def run(self) -> Sample:
        assert self.client is not None
        created = await self.client.request(
            "bonsai/session/create", {"workspace": str(self.workspace)}
        )
        sid = created["sessionId"]
        await self.client.request("bonsai/session/attach", {"sessionId": sid})
        start, cpu = time.time(), cpu_of(self.process.pid)
        sent = await self.client.request("bonsai/chat/send", {"sessionId": sid, "text": QUESTION})
        turn = str(sent["turnId"])
        await asyncio.wait_for(self.done.setdefault(turn, asyncio.Event()).wait(), 300)
        events = self.events[turn]
        deltas = [at for kind, at in events if kind == "delta"]
        if events[-1][0] != "done" or not deltas:
            raise SystemExit(f"the bonsai turn did not stream: {events}")
        end = events[-1][1]
        return Sample(start, deltas[0], end, cpu_of(self.process.pid) - cpu, len(deltas))

    async def close(self) -> None:
        if self.client is not None:
            await self.client.close()
        self.process.terminate()
        self.process.wait(timeout=15)


async def run(upstream: str, runs: int, max_tokens: int, profile: str | None) -> list[Series]:
    relay = Relay(upstream)
    daemon = DaemonPath(relay.base_url, max_tokens, profile)
    sdk_client = AsyncOpenAI(base_url=relay.base_url, api_key="none", max_retries=0)
    provider = OpenAIChatProvider(
        model=MODEL,
        family="other",
        flavour="openai-compatible",
        base_url=relay.base_url,
        api_key=None,
        options=TransportOptions(label="llama-server"),
    )
    try:
        await daemon.connect()
        sdk, ours, turn = (
            Series("A openai SDK"),
            Series("B bonsai provider"),
            Series("C bonsai turn"),
        )
        paths: list[tuple[Series, Callable[[], Awaitable[Sample]]]] = [
            (sdk, lambda: via_sdk(sdk_client, max_tokens)),
            (ours, lambda: via_bonsai(provider, max_tokens)),
            (turn, daemon.run),
        ]
        for _, go in paths:  # warm: prompt cache, connections, the daemon's facts and caches
            await go()
        for i in range(runs):
            for series, go in paths if i % 2 == 0 else paths[::-1]:
                sample = await go()
                sample.req, sample.resp = relay.last_chat(sample.start)
                series.samples.append(sample)
        return [sdk, ours, turn]
    finally:
        await provider.aclose()
        await sdk_client.close()
        await daemon.close()
        relay.close()


def paired(a: Series, b: Series, attr: str) -> float:
    return statistics.median(
        getattr(y, attr) - getattr(x, attr) for x, y in zip(a.samples, b.samples, strict=True)
    )


def report(series: list[Series], runs: int, max_tokens: int, load: tuple[float, float]) -> None:
    print(
        f"{runs} interleaved runs per path, max_tokens {max_tokens}, SmolLM2-135M on "
        f"llama-server (loopback); load average {load[0]:.2f} at start, {load[1]:.2f} at end"
    )
    cols = ("ttft_ms", "pre_send_ms", "server_ms", "after_ms", "total_ms")
    print(
        f"{'path':<20}{'TTFT':>8}{'pre-send':>10}{'server':>8}{'after':>8}{'total':>9}{'CPU ms':>8}{'tokens':>7}"
    )
    for s in series:
        cpu = statistics.median(x.cpu_s for x in s.samples) * 1000
        tokens = statistics.median(x.tokens for x in s.samples)
        figures = "".join(
            f"{s.median(c):>{10 if c == 'pre_send_ms' else 9 if c == 'total_ms' else 8}.1f}"
            for c in cols
        )
        print(f"{s.name:<20}{figures}{cpu:>8.1f}{tokens:>7.0f}")
    sdk, ours, turn = series
    ttft = paired(sdk, ours, "ttft_ms")
    total = statistics.median(
        (y.total_ms / x.total_ms - 1) * 100 for x, y in zip(sdk.samples, ours.samples, strict=True)
    )
    print(
        f"B vs A (paired medians): TTFT {ttft:+.1f} ms (aim <= +5), total {total:+.1f} % "
        f"(aim <= +2), pre-send {paired(sdk, ours, 'pre_send_ms'):+.1f} ms, "
        f"after {paired(sdk, ours, 'after_ms'):+.1f} ms"
    )
    print(
        f"C vs A (paired medians): pre-send {paired(sdk, turn, 'pre_send_ms'):+.1f} ms "
        f"(assembly and bookkeeping before the send), after {paired(sdk, turn, 'after_ms'):+.1f} ms "
        "(first byte to the client's first delta)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--base-url", help="a running OpenAI-compatible server (…/v1)")
    parser.add_argument("--profile", help="write the daemon's cProfile here (path C)")
    args = parser.parse_args()
    start_load = os.getloadavg()[0]
    if args.base_url:
        series = asyncio.run(run(args.base_url, args.runs, args.max_tokens, args.profile))
    else:
        with llama_server() as base:
            series = asyncio.run(run(base, args.runs, args.max_tokens, args.profile))
    report(series, args.runs, args.max_tokens, (start_load, os.getloadavg()[0]))


if __name__ == "__main__":
    main()
