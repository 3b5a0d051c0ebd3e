"""Memory retrieval benchmark on bonsai's own labelled set (bench/memory_set.py).

Usage::

    .venv/bin/python bench/memory_retrieval.py [--model DIR] [--sizes 1000,10000]
        [--cache DIR] [--variant NAME=JSON ...]

For each size the labelled entries (540) are padded with generic distractors,
written as markdown files into a temporary user store and queried through
``MemoryService.search`` with the store watcher running, as in the daemon.
Side by side in one run:

* ``bm25`` — the FTS5 lane alone, ranked by raw BM25;
* ``vectors`` — the embedding lane alone (when a model is available);
* ``previous`` — the fusion before issue 24 (no clause lanes, no entity
  feedback, no date match);
* ``new-novec`` — the default fusion with no model loaded at all;
* ``new-const`` — the default fusion with the vector lane at a constant
  weight (before the fifth round its weight did not follow the lane's gap);
* ``new-norel`` — the default fusion without the relation families in the
  second hop (the fusion of the fifth round);
* ``new`` — the default fusion.

``--variant NAME=JSON`` adds a row: the default fusion with the given
``FusionParams`` fields changed (``'gated={"embedding_weight": 0}'``).
``--dialogue`` adds the conversation-turn set (``memory_set.dialogue``: one
file per dialogue turn, asked in a user's words; held out, no knob is chosen
on it) as its own column, per kind. ``--cache DIR`` keeps each size's store (files and index) under DIR and
reuses it, so a second run skips the build (its build time is then not
reported).

Reported: recall@3 and recall@5 per question kind, p50/p95 query time of
``MemoryService.search`` (not counting process start or the first query) and
the index build time per entry: from the files to a searchable index (every
entry parsed, then indexed and embedded), wall and CPU, with CPU split into
parse and index, the model loaded beforehand (before the fifth round the
figure was the index part alone, with the model's load inside it). The model defaults to the configured memory
model (``$BONSAI_HOME/cache/memory-model``); without one the tiny test model
(tests/memory/tiny_model2vec.py) is built in the temporary folder and named in
the output, so the vector lane is always exercised.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from datetime import timedelta
from pathlib import Path
from typing import Any

import memory_set
from bonsai.core.retrieval.fusion import lane_only
from bonsai.services.config import bonsai_home, load_settings
from bonsai.services.memory.embedding import EmbeddingLoad, model_dir
from bonsai.services.memory.service import MemoryService
from bonsai.settings import MemorySettings
from memory_set import TODAY, Entry, Question

KINDS = ("single-hop", "multi-hop", "temporal", "all", "paraphrase")
PARAPHRASE = Path(__file__).parent / "data" / "memory_labelled.json"
METHODS = ["bm25", "vectors", "previous", "new-novec", "new-const", "new-norel", "new"]
TIMED = ["bm25", "previous", "new-novec", "new-norel", "new"]
SPLITS = ("tune", "test")
TEMPLATES = ("first", "varied")  # the set's first question templates, and the later ones
# --variant rows: FusionParams updates; new-const is the default fusion with the
# vector lane's weight constant (as before the fifth round), not scaled by its gap;
# new-norel the default without the second hop's relation families (the sixth round)
VARIANTS: dict[str, dict[str, Any]] = {
    "new-const": {"embedding_gap_rank": 0},
    "new-norel": {"hop_relations": False},
}
PREVIOUS = {"part_weight": 0.0, "feedback_weight": 0.0, "embedding_gap_rank": 0}
PLAIN = {"part_weight": 0.0, "feedback_weight": 0.0, "embedding_weight": 0.0, "rank_bonus": 0.0}


def split_of(question: Question) -> str:
    """Half the questions tune the fusion's knobs, the other half only report
    (a fixed hash of the question text, so the halves never change)."""
    digest = hashlib.sha256(question.text.encode()).digest()
    return SPLITS[digest[0] % 2]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000


def write_store(root: Path, entries: list[Entry]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for entry in entries:
        (root / f"{entry.name}.md").write_text(entry.markdown(), encoding="utf-8")


def paraphrase_set() -> tuple[list[Entry], list[Question]]:
    """The earlier hand-written set (facts about the sample sessions and the
    libraries bonsai installs, asked in other words): where vectors should pay.
    Reported as its own column; ``all`` is the generated set alone."""
    data = json.loads(PARAPHRASE.read_text(encoding="utf-8"))
    day = TODAY - timedelta(days=60)
    entries = [
        Entry(e["name"], " ".join(e["description"].split()), e["body"], day, day)
        for e in data["entries"]
    ]
    questions = [
        Question("paraphrase", "paraphrase", q["query"], tuple(q["relevant"]))
        for q in data["queries"]
    ]
    return entries, questions


def template_of(question: Question) -> str:
    return "varied" if question.form.startswith("v:") else "first"


def recall(ranked: list[str], relevant: tuple[str, ...], k: int) -> float:
    return len(set(ranked[:k]) & set(relevant)) / len(relevant)


class Mode:
    """Switch ``service`` to one of the compared methods (and back on exit)."""

    def __init__(self, service: MemoryService, method: str) -> None:
        self.service, self.method = service, method

    def __enter__(self) -> MemoryService:
        service = self.service
        assert service._index is not None
        self.saved = (service.fusion, service.priors, service._index.embedder, service._embedding)
        if self.method in ("bm25", "previous"):
            service.fusion = service.fusion.model_copy(
                update=PLAIN if self.method == "bm25" else PREVIOUS
            )
            service.priors = service.priors.model_copy(
                update={"date_match": 0.0, "latest": 0.0, "when_match": 0.0}
            )
        if self.method in VARIANTS:
            service.fusion = service.fusion.model_copy(update=VARIANTS[self.method])
        if self.method in ("bm25", "new-novec"):
            # no model at all (not only a zero weight): no query is embedded
            folder = service.embeddings().model_dir
            service._embedding = EmbeddingLoad(None, "off: benchmark", folder)
            service._index.embedder = None
        return service

    def __exit__(self, *_: object) -> None:
        assert self.service._index is not None
        service = self.service
        service.fusion, service.priors, service._index.embedder, service._embedding = self.saved


def rankings(service: MemoryService, questions: list[Question]) -> dict[str, list[list[str]]]:
    """Each method's top 5 for every question, one method at a time: switching
    to or from the no-model rows resyncs the index (its fingerprint names the
    model), which at 10k costs more than all the queries, so it happens once
    per method, not once per question."""
    index = service._index
    assert index is not None
    params = service.fusion
    out: dict[str, list[list[str]]] = defaultdict(list)
    for question in questions:
        lexical, semantic = index.lanes(question.text, params.candidate_depth)
        out["bm25"].append([h.id for h in lane_only(lexical, params, embedding=False)])
        out["vectors"].append([h.id for h in lane_only(semantic, params, embedding=True)])
    for method in ("previous", "new-novec", "new", *VARIANTS):
        with Mode(service, method):
            for question in questions:
                out[method].append([h.name for h in service.search(question.text, 5).results])
    return out


def timings(service: MemoryService, questions: list[Question], repeat: int) -> dict[str, Any]:
    """Per query, the best of ``repeat`` runs of ``MemoryService.search``:
    wall and CPU time (the machine is shared, so CPU time is the steadier one).
    ``bm25`` is the same service with every extra lane and prior off."""
    out: dict[str, Any] = {}
    for method in TIMED:
        wall: list[float] = []
        cpu: list[float] = []
        with Mode(service, method):
            service.search("warm up", 5)  # a switch of model resyncs once: not timed
            for question in questions:
                best_wall = best_cpu = float("inf")
                for _ in range(repeat):
                    started, started_cpu = time.perf_counter(), time.process_time()
                    service.search(question.text, 5)
                    best_wall = min(best_wall, time.perf_counter() - started)
                    best_cpu = min(best_cpu, time.process_time() - started_cpu)
                wall.append(best_wall)
                cpu.append(best_cpu)
        out[method] = (pct(wall, 0.5), pct(wall, 0.95), pct(cpu, 0.5), pct(cpu, 0.95))
    return out


DIALOGUE_FORMS = ("d:single", "d:temporal", "d:multi")


def run_size(
    size: int, model: Path, repeat: int, cache: Path | None, dialogue: bool = False
) -> dict[str, Any]:
    labelled = memory_set.build()
    extra_entries, extra_questions = paraphrase_set()
    if dialogue:
        turns, asked = memory_set.dialogue()
        extra_entries, extra_questions = extra_entries + turns, extra_questions + asked
    entries = labelled.entries + extra_entries
    entries += memory_set.padding(max(size - len(entries), 0))
    questions = labelled.questions + extra_questions
    digest = hashlib.sha256("".join(e.markdown() for e in entries).encode()).hexdigest()[:12]
    with tempfile.TemporaryDirectory(prefix="bonsai-bench-") as tmp:
        home = (cache / f"{len(entries)}-{digest}" if cache else Path(tmp)) / "home"
        if not (home / "memory").is_dir():
            write_store(home / "memory", entries)
        service = MemoryService(
            home, None, MemorySettings(model_path=str(model)), env={}, today=lambda: TODAY
        )
        watcher = service.watch(lambda _: None)
        try:
            # the build from the files: parse every entry (view), then index
            # them (sync); the two parts are reported apart as well. The model
            # loads once per daemon, before (about 0.4 s of CPU; in the figures
            # of earlier rounds it was inside the build's time)
            service.embeddings()
            started, started_cpu = time.perf_counter(), time.process_time()
            service.view()
            parse_cpu_s = time.process_time() - started_cpu
            fresh = not service.sync().skipped
            build_s = time.perf_counter() - started
            build_cpu_s = time.process_time() - started_cpu
            service.search("warm up", 5)
            scores: dict[str, list[float]] = defaultdict(list)
            ranks = rankings(service, questions)
            for i, question in enumerate(questions):
                for method, per_question in ranks.items():
                    ranked = per_question[i]
                    for k in (3, 5):
                        value = recall(ranked, question.relevant, k)
                        if question.kind == "dialogue":
                            for form in (question.form, "d:all"):
                                scores[f"dialogue|{method}|{form}|{k}"].append(value)
                            continue
                        for part in ("all", split_of(question), template_of(question)):
                            scores[f"{part}|{method}|{question.kind}|{k}"].append(value)
                            if question.kind != "paraphrase":
                                scores[f"{part}|{method}|all|{k}"].append(value)
            latency = timings(service, labelled.questions, repeat)
            status = service.embeddings_status()
        finally:
            watcher.stop()
            service.close()
    return {
        "size": len(entries),
        "questions": f"{len(labelled.questions)} + {len(extra_questions)} paraphrase"
        + (" and dialogue" if dialogue else ""),
        "build_ms_per_entry": build_s * 1000 / len(entries) if fresh else None,
        "build_cpu_ms_per_entry": build_cpu_s * 1000 / len(entries) if fresh else None,
        "parse_cpu_ms_per_entry": parse_cpu_s * 1000 / len(entries),
        "embeddings": status,
        "recall": {key: statistics.fmean(v) for key, v in scores.items()},
        "latency_ms": latency,
    }


def report(rows: list[dict[str, Any]], model: str) -> None:
    print(f"model: {model}")
    for row in rows:
        build = (
            f"index build {row['build_ms_per_entry']:.2f} ms/entry "
            f"(CPU {row['build_cpu_ms_per_entry']:.2f}: parse "
            f"{row['parse_cpu_ms_per_entry']:.2f} + index "
            f"{row['build_cpu_ms_per_entry'] - row['parse_cpu_ms_per_entry']:.2f})"
            if row["build_ms_per_entry"] is not None
            else "index from the cache (no build)"
        )
        print(
            f"\n{row['size']} entries, {row['questions']} questions; "
            f"embeddings {row['embeddings']}; {build}"
        )
        head = f"{'method':<9} |" + "".join(f" {kind:>17} |" for kind in KINDS)
        head += f" {'p50 ms':>7} {'p95 ms':>7} {'cpu p50':>7} {'cpu p95':>7}"
        print(head)
        print(f"{'':<9} |" + "".join(f" {'R@3':>8} {'R@5':>8} |" for _ in KINDS))
        print("-" * len(head))
        recall = row["recall"]
        for method in METHODS:
            cells = "".join(
                f" {recall[f'all|{method}|{kind}|3']:>8.3f}"
                f" {recall[f'all|{method}|{kind}|5']:>8.3f} |"
                for kind in KINDS
            )
            times = row["latency_ms"].get(method)
            timing = "".join(f" {t:>7.2f}" for t in times) if times else f" {'-':>7}" * 4
            print(f"{method:<9} |{cells}{timing}")
        for part in ("all", *SPLITS, *TEMPLATES):
            base = recall[f"{part}|bm25|multi-hop|5"]
            new = recall[f"{part}|new|multi-hop|5"]
            gain = recall[f"{part}|new|all|5"] - recall[f"{part}|bm25|all|5"]
            ratio = f"{new / base:.2f}x" if base else "n/a"
            print(f"{part:>5}: multi-hop R@5 new/bm25 {ratio}; overall R@5 new - bm25 {gain:+.3f}")
        for parts, label in (
            (SPLITS, "split (tune: the half the knobs were chosen on; test: the other half)"),
            (TEMPLATES, "template (first: the set's first templates; varied: the later ones)"),
        ):
            print(f"R@5 per {label}")
            for method in METHODS:
                cells = "  ".join(
                    f"{part} "
                    + " ".join(
                        f"{recall.get(f'{part}|{method}|{kind}|5', float('nan')):.3f}"
                        for kind in KINDS
                    )
                    for part in parts
                )
                print(f"  {method:<9} {cells}")
        if "dialogue|new|d:all|5" in recall:
            forms = (*DIALOGUE_FORMS, "d:all")
            print("dialogue turns (held out), R@3 / R@5: " + "  ".join(forms))
            for method in METHODS:
                cells = "  ".join(
                    f"{recall.get(f'dialogue|{method}|{form}|3', float('nan')):.3f} / "
                    f"{recall.get(f'dialogue|{method}|{form}|5', float('nan')):.3f}"
                    for form in forms
                )
                print(f"  {method:<9} {cells}")
        bm25_cpu, new_cpu = row["latency_ms"]["bm25"][3], row["latency_ms"]["new"][3]
        print(f"CPU p95 new / plain BM25 through the same service: {new_cpu / bm25_cpu:.2f}x")
    print("\nlatency: MemoryService.search, best of the repeats per query, watcher running;")
    print("bm25 timing: the same service with every extra lane, prior and the vectors off;")
    print("bm25/vectors recall: single lanes ranked by raw score. Kinds in each split row:")
    print("single-hop multi-hop temporal all paraphrase (all: the generated set alone).")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", type=Path, help="model2vec folder (default: configured)")
    parser.add_argument("--sizes", default="1000,10000", help="collection sizes")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per query")
    parser.add_argument("--cache", type=Path, help="keep and reuse the stores under this folder")
    parser.add_argument(
        "--dialogue", action="store_true", help="add the held-out conversation-turn set"
    )
    parser.add_argument(
        "--variant", action="append", default=[], help="NAME=JSON: a row with FusionParams changed"
    )
    args = parser.parse_args(argv)
    for spec in args.variant:
        name, _, changes = spec.partition("=")
        VARIANTS[name] = json.loads(changes)
        METHODS.append(name)
        TIMED.append(name)
    home = bonsai_home()
    folder = args.model or model_dir(home, load_settings(home, None).settings.memory)
    with tempfile.TemporaryDirectory(prefix="bonsai-tiny-model-") as tmp:
        if folder.is_dir():
            label = str(folder)
        else:
            sys.path.insert(0, str(Path(__file__).parents[1] / "tests" / "memory"))
            from tiny_model2vec import build_tiny_model

            folder = build_tiny_model(Path(tmp))
            label = "tiny test model (tests/memory/tiny_model2vec.py; no configured model)"
        for size in args.sizes.split(","):
            # each size reported as soon as it is measured (a long run cut
            # short keeps what it measured)
            report([run_size(int(size), folder, args.repeat, args.cache, args.dialogue)], label)
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
