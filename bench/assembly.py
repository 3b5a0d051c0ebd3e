"""Assembly + accounting time per turn for 10k, 50k and 200k-token sessions.

Builds a synthetic coding session (user request, then assistant steps with a
tool call and a tool result of realistic size), grows it one step per turn
the way a daemon does (the state and the session's memo carried from call to
call), and times ``assemble`` for each of the last turns with the real o200k
tokenizer and its per-hash count cache. A call that no stage rewrites should
cost its *new* content, not the session's length; the calls that rewrite
(the economic stub batch) are listed apart, and so are the calls of a session
far over its window (GC stubs and folds). A baseline in the same run times a
full re-count of the session without the cache (what a naive assembler pays).

Every time is taken twice: wall clock (``perf_counter``) and the process's CPU
time (``process_time``). On a loaded machine the wall clock also counts the
time other processes held the core; CPU time and the ratio to the baseline
(measured in the same run) are what compare across machines and loads.

    .venv/bin/python bench/assembly.py [--turns 60]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from bonsai.core.context import (
    AssembleInput,
    AssemblyMemo,
    Budget,
    ContextState,
    Item,
    SystemPart,
    assemble,
)
from bonsai.core.replay.report import REWRITE_KINDS, percentile
from bonsai.domain import Evidence, Message, ToolCall, content_hash
from bonsai.services.tokens import default_cache_dir, estimator_for
from bonsai.settings import ContextSettings, ModelInfo

SIZES = (10_000, 50_000, 200_000)
WORDS = [
    "def",
    "parse(self,",
    "tokens):",
    "return",
    "[t",
    "for",
    "t",
    "in",
    "tokens",
    "if",
    "t.kind",
    "!=",
    "'space']",
    "#",
    "noqa",
]


def _text(n_words: int, salt: int) -> str:
    return " ".join(
        f"{WORDS[(i + salt) % len(WORDS)]}{(i * 7 + salt) % 97}" for i in range(n_words)
    )


def _step(n: int) -> list[Message]:
    call = ToolCall(id=f"c{n}", name="read_file", arguments=f'{{"path": "src/m{n % 40}.py"}}')
    output = _text(300 + (n * 37) % 500, n)
    evidence = Evidence(kind="read", path=f"src/m{n % 40}.py", content_hash=content_hash(output))
    return [
        Message(role="assistant", content=f"Looking at module {n}.", tool_calls=(call,)),
        Message(
            role="tool", content=output, tool_call_id=call.id, name="read_file", evidence=evidence
        ),
    ]


def session(tokens: int, counter: object) -> list[Item]:
    messages = [Message(role="user", content="Fix the parser bug. " + _text(60, 1))]
    total = 0
    n = 0
    while total < tokens:
        for m in _step(n):
            messages.append(m)
            total += counter.count_message(m).tokens  # type: ignore[attr-defined]
        n += 1
    return [Item(id=f"m{i + 1}", seq=i + 1, turn=1, message=m) for i, m in enumerate(messages)]


def time_turns(
    items: list[Item], counter: object, turns: int, window: int
) -> tuple[list[float], list[float], list[bool]]:
    """Assembly wall and CPU time (ms) for each of the last ``turns`` turns of
    ``items``, and whether the call rewrote (a stage stubbed, folded or archived)."""
    parts = [
        SystemPart(id="sys:persona", label="persona", text="You are bonsai. " + _text(200, 3)),
        SystemPart(
            id="sys:volatile",
            label="volatile",
            text="## Volatile state\nGit: clean.",
            cacheable=False,
        ),
    ]
    tools = [{"name": "read_file", "description": "Read a file", "parameters": {"type": "object"}}]
    state = ContextState()
    memo = AssemblyMemo()
    base = len(items) - 2 * turns
    for k in range(base - 2 * 3, base, 2):  # warm the counter cache with earlier turns
        state = _assemble(items[:k], parts, tools, state, counter, window, memo).state
    times, cpu, rewrote = [], [], []
    for k in range(base, len(items) + 1, 2):
        started, cpu_started = time.perf_counter(), time.process_time()
        result = _assemble(items[:k], parts, tools, state, counter, window, memo)
        times.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - cpu_started) * 1000)
        rewrote.append(any(r.kind in REWRITE_KINDS for r in result.records))
        state = result.state
    return times, cpu, rewrote


def _assemble(items, parts, tools, state, counter, window, memo):  # type: ignore[no-untyped-def]
    return assemble(
        AssembleInput(
            parts=parts,
            tools=tools,
            items=items,
            state=state,
            budget=Budget(window=window, reserve=16_000),
            settings=ContextSettings(),
            family="openai",
            counter=counter,
            turn=1,
            memo=memo,
        )
    )


def recount_ms(items: list[Item], cache_dir: Path) -> tuple[float, float]:
    """Baseline: count the whole session with a fresh counter (no cache); wall and CPU ms."""
    fresh = estimator_for(
        ModelInfo(family="openai", tokenizer="o200k_base"), cache_dir=cache_dir, tokenizer_path=None
    )
    started, cpu_started = time.perf_counter(), time.process_time()
    for item in items:
        fresh.count_message(item.message)
    return (time.perf_counter() - started) * 1000, (time.process_time() - cpu_started) * 1000


def new_content_ms(
    items: list[Item], counter: object, window: int, sizes: tuple[int, ...]
) -> list[tuple[int, float, float]]:
    """At a fixed session length: one turn that adds ``n`` words of new output to a
    session assembled the turn before (its memo warm, its state carried): wall
    and CPU ms."""
    parts = [SystemPart(id="sys:persona", label="persona", text="You are bonsai.")]
    out = []
    for n in sizes:
        memo = AssemblyMemo()
        state = _assemble(items, parts, [], ContextState(), counter, window, memo).state
        state = _assemble(items, parts, [], state, counter, window, memo).state  # settled
        call = ToolCall(id=f"new{n}", name="bash", arguments='{"command": "cat big.log"}')
        new = [
            Message(role="assistant", content="Reading the log.", tool_calls=(call,)),
            Message(role="tool", content=_text(n, n), tool_call_id=call.id),
        ]
        grown = items + [
            Item(id=f"x{n}_{k}", seq=len(items) + k + 1, turn=1, message=m)
            for k, m in enumerate(new)
        ]
        started, cpu_started = time.perf_counter(), time.process_time()
        _assemble(grown, parts, [], state, counter, window, memo)
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        out.append((n, wall * 1000, cpu * 1000))
    return out


def pressure_ms(
    items: list[Item], counter: object, turns: int, usable: int
) -> dict[str, list[float]]:
    """A session far bigger than its window: GC stubs and tier-2 folds fire as it
    grows. CPU ms of each of the last ``turns`` turns, by what the call did:
    ``fold`` (a compaction folded), ``stubs`` (stubs only), ``none``."""
    parts = [SystemPart(id="sys:persona", label="persona", text="You are bonsai. " + _text(200, 3))]
    tools = [{"name": "read_file", "description": "Read a file", "parameters": {"type": "object"}}]
    window = usable + 16_000
    state, memo = ContextState(), AssemblyMemo()
    base = len(items) - 2 * turns
    for k in range(max(2, base - 60), base, 2):  # settle: the first folds happen here
        state = _assemble(items[:k], parts, tools, state, counter, window, memo).state
    out: dict[str, list[float]] = {"none": [], "stubs": [], "fold": []}
    for k in range(base, len(items) + 1, 2):
        cpu_started = time.process_time()
        result = _assemble(items[:k], parts, tools, state, counter, window, memo)
        cpu = (time.process_time() - cpu_started) * 1000
        kinds = {r.kind for r in result.records}
        out["fold" if "fold" in kinds else "stubs" if "stub" in kinds else "none"].append(cpu)
        state = result.state
    return out


def reread_ms(
    items: list[Item], counter: object, window: int, calls: int = 30
) -> list[tuple[str, float]]:
    """The same log assembled again the way a daemon reads it (a view poll): the
    state back from JSON every call, and the items the same objects, new items of
    the same messages (a store that keeps its messages), or new items and new
    messages (a store that parses every row again). CPU ms per call."""
    parts = [SystemPart(id="sys:persona", label="persona", text="You are bonsai. " + _text(200, 3))]
    tools = [{"name": "read_file", "description": "Read a file", "parameters": {"type": "object"}}]
    rows = [(i.id, i.seq, i.turn, i.message.model_dump()) for i in items]
    ways = {
        "same items": lambda: items,
        "new items, same messages": lambda: [i.model_copy() for i in items],
        "new items and messages": lambda: [
            Item(id=a, seq=b, turn=c, message=Message.model_validate(d)) for a, b, c, d in rows
        ],
    }
    out = []
    for label, read in ways.items():
        memo, state = AssemblyMemo(), ContextState()
        for _ in range(3):
            state = _assemble(read(), parts, tools, state, counter, window, memo).state
        spent = 0.0
        for _ in range(calls):
            log = read()
            loaded = ContextState.model_validate(state.model_dump(mode="json"))
            started = time.process_time()
            _assemble(log, parts, tools, loaded, counter, window, memo)
            spent += time.process_time() - started
        out.append((label, spent / calls * 1000))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=60, help="timed turns per size")
    args = parser.parse_args()
    cache_dir = default_cache_dir()
    print(
        f"{'session':>10} {'items':>6} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} "
        f"{'p50 CPU ms':>10} {'p95 CPU ms':>10} {'recount ms':>10} {'recount CPU':>11} {'p95/recount':>11} "
        f"{'CPU ratio':>9}"
    )
    rewrites: list[tuple[int, list[float], list[float]]] = []
    for size in SIZES:
        counter = estimator_for(
            ModelInfo(family="openai", tokenizer="o200k_base"),
            cache_dir=cache_dir,
            tokenizer_path=None,
        )
        items = session(size, counter)
        times, cpu, rewrote = time_turns(items, counter, args.turns, window=4 * size + 16_000)
        baseline, baseline_cpu = recount_ms(items, cache_dir)
        p95, p95_cpu = percentile(times, 95), percentile(cpu, 95)
        print(
            f"{size:>10,} {len(items):>6} {statistics.median(times):>8.2f} {p95:>8.2f} "
            f"{max(times):>8.2f} {statistics.median(cpu):>10.2f} {p95_cpu:>10.2f} "
            f"{baseline:>10.2f} {baseline_cpu:>11.2f} "
            f"{p95 / baseline:>11.3f} {p95_cpu / max(baseline_cpu, 1e-9):>9.3f}"
        )
        rewrites.append(
            (
                size,
                [c for c, r in zip(cpu, rewrote, strict=True) if not r],
                [c for c, r in zip(cpu, rewrote, strict=True) if r],
            )
        )
        if size == SIZES[-1]:
            verdict = "met" if p95_cpu <= 5.0 else "missed"
            print(f"{'':>10} aim p95 ≤ 5 ms at {size:,} tokens (CPU time): {verdict}")
    print("\nCPU ms of the calls above, by whether a stage rewrote:")
    print(
        f"{'session':>10} {'calls':>6} {'p50':>7} {'p95':>7} {'rewrites':>8} {'p50':>7} {'max':>7}"
    )
    for size, plain, rewriting in rewrites:
        p50 = statistics.median(plain) if plain else 0.0
        p95 = percentile(plain, 95) if plain else 0.0
        r50 = statistics.median(rewriting) if rewriting else 0.0
        rmax = max(rewriting, default=0.0)
        print(
            f"{size:>10,} {len(plain):>6} {p50:>7.2f} {p95:>7.2f} {len(rewriting):>8} "
            f"{r50:>7.2f} {rmax:>7.2f}"
        )
    usable = 32_000
    print(f"\n200,000 tokens in a {usable:,}-token usable window (GC and folds fire), CPU ms:")
    print(f"{'call':>10} {'calls':>6} {'p50':>7} {'p95':>7} {'max':>7}")
    for kind, cpu in pressure_ms(items, counter, args.turns, usable).items():
        if cpu:
            print(
                f"{kind:>10} {len(cpu):>6} {statistics.median(cpu):>7.2f} "
                f"{percentile(cpu, 95):>7.2f} {max(cpu):>7.2f}"
            )
    print("\n200,000 tokens assembled again as a daemon reads it (state from JSON), CPU ms:")
    for label, ms in reread_ms(items, counter, 4 * SIZES[-1] + 16_000):
        print(f"{label:>26} {ms:>7.2f}")
    print("\none turn at 200,000 tokens, by the size of its new tool output:")
    print(f"{'new words':>10} {'ms':>8} {'CPU ms':>8}")
    for words, ms, cpu_ms in new_content_ms(
        items, counter, 4 * SIZES[-1] + 16_000, (100, 1_000, 10_000, 50_000)
    ):
        print(f"{words:>10,} {ms:>8.2f} {cpu_ms:>8.2f}")


if __name__ == "__main__":
    main()
