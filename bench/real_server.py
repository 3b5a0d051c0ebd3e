"""Benchmark: bonsai's streaming path against the official ``openai`` SDK, on the
same real server, in one run.

Starts llama.cpp's ``llama-server`` (or uses ``--base-url``) serving
SmolLM2-135M-Instruct on loopback, then streams the same request, alternating,
through

* the official ``openai`` SDK (``AsyncOpenAI().chat.completions.create(stream=True)``),
  the baseline; and
* bonsai's provider client (``OpenAIChatProvider.stream``: httpx, SSE framing,
  decoding into provider events), the path every agent step takes.

It reports the median time to first token, the median total time, and the
time per streamed token, and bonsai's overhead against the baseline (aim:
<= 5 ms added to time to first token, <= 2 % to total time). Sampling is
greedy with a fixed seed, so both paths stream the same tokens; the server's
prompt cache is warmed first so both see the same cache state.

Run: .venv/bin/python bench/real_server.py [--runs 15] [--max-tokens 64]
(needs ``sh tests/real_server/setup.sh`` first, or ``--base-url`` of a running server).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from openai import AsyncOpenAI

from bonsai.domain import Message
from bonsai.services.providers.openai_chat import OpenAIChatProvider
from bonsai.services.providers.transport import TransportOptions
from bonsai.services.providers.types import ChatRequest, SystemBlock, TextDelta

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / ".tools" / "llama"
MODEL = "smollm2-135m"
SYSTEM = "You are a concise assistant. Answer in plain prose."
QUESTION = "Explain in a few sentences what a context window is for a language model."


@dataclass
class Sample:
    ttft_s: float
    total_s: float
    tokens: int


@dataclass
class Series:
    name: str
    samples: list[Sample] = field(default_factory=list)

    def median(self, attr: str) -> float:
        return statistics.median(getattr(s, attr) for s in self.samples)

    def per_token_ms(self) -> float:
        return statistics.median(
            (s.total_s - s.ttft_s) / max(s.tokens - 1, 1) * 1000 for s in self.samples
        )


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
        "--port", str(port), "--ctx-size", "4096", "--parallel", "1", "--threads", "1",
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


async def via_sdk(client: AsyncOpenAI, max_tokens: int) -> Sample:
    start = time.perf_counter()
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
            if not first:
                first = time.perf_counter() - start
    return Sample(first, time.perf_counter() - start, tokens)


async def via_bonsai(provider: OpenAIChatProvider, max_tokens: int) -> Sample:
    request = ChatRequest(
        model=MODEL,
        system=[SystemBlock(text=SYSTEM)],
        messages=[Message(role="user", content=QUESTION)],
        max_tokens=max_tokens,
        temperature=0.0,
    )
    start = time.perf_counter()
    first, tokens = 0.0, 0
    async for event in provider.stream(request):
        if isinstance(event, TextDelta):
            tokens += 1
            if not first:
                first = time.perf_counter() - start
    return Sample(first, time.perf_counter() - start, tokens)


async def run(base_url: str, runs: int, max_tokens: int) -> tuple[Series, Series]:
    sdk_client = AsyncOpenAI(base_url=base_url, api_key="none", max_retries=0)
    provider = OpenAIChatProvider(
        model=MODEL,
        family="other",
        flavour="openai-compatible",
        base_url=base_url,
        api_key=None,
        options=TransportOptions(label="llama-server"),
    )
    sdk, ours = Series("openai SDK"), Series("bonsai provider")
    paths: list[tuple[Series, Callable[[], Awaitable[Sample]]]] = [
        (sdk, lambda: via_sdk(sdk_client, max_tokens)),
        (ours, lambda: via_bonsai(provider, max_tokens)),
    ]
    for _, go in paths:  # warm the server's prompt cache and both clients' connections
        await go()
    rng = random.Random(0)
    for _ in range(runs):
        order = paths[:]
        rng.shuffle(order)  # alternate who goes first
        for series, go in order:
            series.samples.append(await go())
    await provider.aclose()
    await sdk_client.close()
    return sdk, ours


def report(sdk: Series, ours: Series, runs: int, max_tokens: int) -> None:
    print(f"{runs} runs each, max_tokens {max_tokens}, SmolLM2-135M on llama-server (loopback)")
    print(f"{'path':<18}{'TTFT ms':>10}{'total ms':>11}{'ms/token':>10}{'tokens':>8}")
    for series in (sdk, ours):
        tokens = statistics.median(s.tokens for s in series.samples)
        print(
            f"{series.name:<18}{series.median('ttft_s') * 1000:>10.1f}"
            f"{series.median('total_s') * 1000:>11.1f}{series.per_token_ms():>10.2f}{tokens:>8.0f}"
        )
    ttft = (ours.median("ttft_s") - sdk.median("ttft_s")) * 1000
    total = (ours.median("total_s") / sdk.median("total_s") - 1) * 100
    per_token = ours.per_token_ms() - sdk.per_token_ms()
    print(
        f"bonsai vs SDK: TTFT {ttft:+.1f} ms (aim <= +5), total {total:+.1f} % (aim <= +2), "
        f"per token {per_token:+.3f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--base-url", help="a running OpenAI-compatible server (…/v1)")
    args = parser.parse_args()
    if args.base_url:
        sdk, ours = asyncio.run(run(args.base_url, args.runs, args.max_tokens))
    else:
        with llama_server() as base:
            sdk, ours = asyncio.run(run(base, args.runs, args.max_tokens))
    report(sdk, ours, args.runs, args.max_tokens)


if __name__ == "__main__":
    main()
