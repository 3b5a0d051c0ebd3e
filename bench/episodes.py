"""Task episodes on recorded sessions: tokens saved by archiving, and a recall probe.

The recordings (default ../shared/trajectories) are single-task runs, so the
benchmark joins every run of the folder into one long session, one task after
another, the way a user works through several tasks in one session: after the
first user message of each run it inserts the ``set_session_title`` call with
``episode_action: "new_topic"`` that the agent makes when a new task starts
(so every run becomes one episode). Leading system messages of the first run
are the persona; those of later runs are left out.

1. **Tokens.** The session is replayed call by call through the pipeline
   (state carried as the daemon carries it, deterministic summaries) twice:
   episodes on, and off (the baseline), same preset and window. Printed: input
   tokens over all calls, the ratio to the baseline, archives, rewrites, calls
   that fit, and pipeline time.
2. **Recall probe.** The session is stored in a scratch database. For every
   archived episode, each tool output gives one probe: a line of it (4+ words)
   found in no other message. ``search_history`` (FTS5 BM25, what ``recall``
   runs) gets the line as the query; a hit is the message holding it in the top
   3. Beside it, a baseline: rank messages by how many query words they hold.

    .venv/bin/python bench/episodes.py [FOLDER] [--window 32000] [--preset balanced]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bonsai.core.context import AssembleInput, Assembly, ContextState, Item
from bonsai.core.replay.report import REWRITE_KINDS, percentile
from bonsai.domain import Message, ToolCall
from bonsai.services.importers import import_file
from bonsai.services.replay.corpus import recordings
from bonsai.services.replay.policies import PipelinePolicy
from bonsai.services.replay.setup import build_config
from bonsai.services.replay.source import ReplaySource, source_from_messages
from bonsai.services.store.db import open_database
from bonsai.services.store.history_search import search_history
from bonsai.services.store.sessions import SessionStore
from bonsai.settings import EpisodeSettings, PresetName

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_FOLDER = ROOT.parent / "shared" / "trajectories"
WORD = re.compile(r"\w+")


# ------------------------------------------------------------------ the session
def title_step(name: str, index: int) -> list[Message]:
    args = json.dumps({"title": name, "episode_action": "new_topic"})
    call = ToolCall(id=f"bench_title_{index}", name="set_session_title", arguments=args)
    result = f"session title set to {name!r} (new_topic)"
    return [
        Message(role="assistant", tool_calls=(call,)),
        Message(role="tool", content=result, tool_call_id=call.id, name=call.name),
    ]


def joined_session(folder: Path) -> list[Message]:
    """Every run of the folder, one after another, each opening a new topic."""
    out: list[Message] = []
    for index, (name, path, run) in enumerate(recordings(folder)):
        messages = import_file(path, run=run).messages
        lead = 0
        while lead < len(messages) and messages[lead].role == "system":
            lead += 1
        out += messages[:lead] if index == 0 else []
        body = messages[lead:]
        first_user = next((i for i, m in enumerate(body) if m.role == "user"), 0)
        out += [*body[: first_user + 1], *title_step(name, index), *body[first_user + 1 :]]
    return out


# ------------------------------------------------------------------ tokens
@dataclass
class EpisodePolicy(PipelinePolicy):
    """The replay's managed policy with task episodes on or off."""

    episodes_on: bool = True

    def _input(self, items: list[Item], turn: int, state: ContextState) -> AssembleInput:
        inp = super()._input(items, turn, state)
        return inp.model_copy(update={"episodes": EpisodeSettings() if self.episodes_on else None})


@dataclass
class Side:
    tokens: int = 0
    calls: int = 0
    fits: int = 0
    archives: int = 0
    rewrites: int = 0
    ms: list[float] = field(default_factory=list)
    last: Assembly | None = None


def replay(source: ReplaySource, window: int, preset: PresetName, on: bool) -> Side:
    config = build_config(window=window, preset=preset)
    parts = [source.persona] if source.persona else []
    policy = EpisodePolicy(
        name="managed",
        parts=parts,
        tools=[],
        budget=config.budget,
        settings=config.settings,
        family=config.family,
        counter=config.counter,
        episodes_on=on,
    )
    side = Side()
    for pos in source.steps:
        items = source.items[:pos]
        started = time.perf_counter()
        assembly = policy.step(items, items[-1].turn if items else 0)
        side.ms.append((time.perf_counter() - started) * 1000)
        kinds = {r.kind for r in assembly.records}
        side.tokens += assembly.totals.used
        side.calls += 1
        side.fits += assembly.totals.used <= assembly.totals.usable
        side.archives += sum(r.kind == "archive" for r in assembly.records)
        side.rewrites += bool(kinds & (REWRITE_KINDS | {"archive"}))
        side.last = assembly
    return side


# ------------------------------------------------------------------ recall probe
@dataclass(frozen=True)
class Probe:
    message_id: str
    query: str


def probes(messages: list[Message], ids: list[str], archived: set[int]) -> list[Probe]:
    """One probe per archived tool output: a line of 4+ words no other message holds."""
    out: list[Probe] = []
    for pos in sorted(archived):
        message = messages[pos]
        if message.role != "tool":
            continue
        for line in message.content.splitlines():
            line = line.strip()
            if len(WORD.findall(line)) < 4 or len(line) > 200:
                continue
            if sum(line in m.content for m in messages) == 1:
                out.append(Probe(ids[pos], line))
                break
    return out


def overlap_rank(messages: list[Message], ids: list[str], query: str, k: int) -> list[str]:
    """Baseline: messages ranked by how many distinct query words they contain."""
    words = {w.lower() for w in WORD.findall(query)}
    scored = [
        (len(words & {w.lower() for w in WORD.findall(m.content)}), -i)
        for i, m in enumerate(messages)
    ]
    best = sorted(range(len(messages)), key=lambda i: scored[i], reverse=True)[:k]
    return [ids[i] for i in best]


def probe_recall(
    messages: list[Message], archived: set[int]
) -> dict[str, tuple[float, list[float]]]:
    with tempfile.TemporaryDirectory() as tmp:
        conn = open_database(Path(tmp) / "bench.db")
        store = SessionStore(conn)
        sid = store.create(tmp, "episodes bench").session_id
        ids = [s.message_id for s in store.append_many(sid, messages)]
        checks = probes(messages, ids, archived)
        result: dict[str, tuple[float, list[float]]] = {}
        for label, search in (
            (
                "fts5 bm25 (recall)",
                lambda q: [h.message_id for h in search_history(conn, sid, q, 3)],
            ),
            ("word overlap (baseline)", lambda q: overlap_rank(messages, ids, q, 3)),
        ):
            hits, ms = 0, []
            for probe in checks:
                started = time.perf_counter()
                top = search(probe.query)
                ms.append((time.perf_counter() - started) * 1000)
                hits += probe.message_id in top
            result[label] = (hits / len(checks) if checks else 0.0, ms)
        conn.close()
        print(f"recall probe: {len(checks)} probes from the archived tool outputs")
        return result


def archived_positions(source: ReplaySource, last: Assembly | None, lead: int) -> set[int]:
    """Positions (in the joined message list) of every message archived at the end."""
    if last is None or last.state.episodes is None:
        return set()
    position = {item.id: lead + i for i, item in enumerate(source.items)}
    return {position[i] for entry in last.state.episodes.archives.values() for i in entry.ids}


# ------------------------------------------------------------------ main
def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("folder", nargs="?", type=Path, default=DEFAULT_FOLDER)
    parser.add_argument("--windows", default="32000,64000,128000", help="comma-separated")
    parser.add_argument("--preset", default="balanced", choices=["keep", "balanced", "save"])
    args = parser.parse_args()
    messages = joined_session(args.folder)
    source = source_from_messages(messages)
    print(f"{len(messages)} messages in {len(source.steps)} model calls; preset {args.preset}")
    for window in (int(w) for w in args.windows.split(",")):
        run_window(messages, source, window, args.preset)


def run_window(
    messages: list[Message], source: ReplaySource, window: int, preset: PresetName
) -> None:
    off = replay(source, window, preset, on=False)
    on = replay(source, window, preset, on=True)
    print(f"\nwindow {window:,}")
    print(
        f"{'episodes':<10} {'input tokens':>13} {'ratio':>6} {'archives':>8} {'rewrites':>8} "
        f"{'fit':>6} {'p50 ms':>7} {'p95 ms':>7}"
    )
    for label, side in (("off (base)", off), ("on", on)):
        print(
            f"{label:<10} {side.tokens:>13,} {side.tokens / off.tokens:>6.3f} {side.archives:>8} "
            f"{side.rewrites:>8} {side.fits / side.calls:>6.1%} {percentile(side.ms, 50):>7.2f} "
            f"{percentile(side.ms, 95):>7.2f}"
        )
    saved = off.tokens - on.tokens
    print(f"archiving saved {saved:,} input tokens ({saved / off.tokens:.1%})")
    lead = len(messages) - len(source.items)
    results = probe_recall(messages, archived_positions(source, on.last, lead))
    base = results["word overlap (baseline)"]
    for label, (rate, ms) in results.items():
        mean = statistics.fmean(ms) if ms else 0.0
        ratio = mean / statistics.fmean(base[1]) if base[1] else 0.0
        print(
            f"{label:<24} hit@3 {rate:6.1%}  p50 {percentile(ms, 50):6.2f} ms  "
            f"p95 {percentile(ms, 95):6.2f} ms  latency vs baseline {ratio:5.2f}"
        )


if __name__ == "__main__":
    main()
