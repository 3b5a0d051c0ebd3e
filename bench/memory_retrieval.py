"""Memory retrieval benchmark on bonsai's own labelled set (bench/memory_set.py).

Usage::

    .venv/bin/python bench/memory_retrieval.py [--model DIR] [--sizes 1000,10000]

For each size the labelled entries (540) are padded with generic distractors,
written as markdown files into a temporary user store and queried through
``MemoryService.search`` with the store watcher running, as in the daemon.
Side by side in one run:

* ``bm25`` — the FTS5 lane alone, ranked by raw BM25;
* ``vectors`` — the embedding lane alone (when a model is available);
* ``previous`` — the fusion before issue 24 (no clause lanes, no entity
  feedback, no date match);
* ``new`` — the default fusion.

Reported: recall@3 and recall@5 per question kind, p50/p95 query time of
``MemoryService.search`` (not counting process start or the first query) and
the index build time per entry. The model defaults to the configured memory
model (``$BONSAI_HOME/cache/memory-model``); without one the tiny test model
(tests/memory/tiny_model2vec.py) is built in the temporary folder and named in
the output, so the vector lane is always exercised.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import memory_set
from bonsai.core.retrieval.fusion import lane_only
from bonsai.services.config import bonsai_home, load_settings
from bonsai.services.memory import MemoryService
from bonsai.services.memory.embedding import model_dir
from bonsai.settings import MemorySettings
from memory_set import TODAY, Entry, Question

KINDS = ("single-hop", "multi-hop", "temporal", "all")
METHODS = ("bm25", "vectors", "previous", "new")
PREVIOUS = {"part_weight": 0.0, "feedback_weight": 0.0}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000


def write_store(root: Path, entries: list[Entry]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for entry in entries:
        (root / f"{entry.name}.md").write_text(entry.markdown(), encoding="utf-8")


def recall(ranked: list[str], relevant: tuple[str, ...], k: int) -> float:
    return len(set(ranked[:k]) & set(relevant)) / len(relevant)


def rankings(service: MemoryService, question: Question) -> dict[str, list[str]]:
    index = service._index
    assert index is not None
    params = service.fusion
    lexical, semantic = index.lanes(question.text, params.candidate_depth)
    out = {
        "bm25": [h.id for h in lane_only(lexical, params, embedding=False)],
        "vectors": [h.id for h in lane_only(semantic, params, embedding=True)],
    }
    new_fusion, new_priors = service.fusion, service.priors
    service.fusion = new_fusion.model_copy(update=PREVIOUS)
    service.priors = new_priors.model_copy(update={"date_match": 0.0})
    out["previous"] = [h.name for h in service.search(question.text, 5).results]
    service.fusion, service.priors = new_fusion, new_priors
    out["new"] = [h.name for h in service.search(question.text, 5).results]
    return out


def timings(service: MemoryService, questions: list[Question], repeat: int) -> dict[str, Any]:
    """Per query, the best of ``repeat`` runs of ``MemoryService.search``."""
    out: dict[str, list[float]] = {"previous": [], "new": []}
    new_fusion, new_priors = service.fusion, service.priors
    old_fusion = new_fusion.model_copy(update=PREVIOUS)
    old_priors = new_priors.model_copy(update={"date_match": 0.0})
    for method, fusion, priors in (
        ("previous", old_fusion, old_priors),
        ("new", new_fusion, new_priors),
    ):
        service.fusion, service.priors = fusion, priors
        for question in questions:
            best = float("inf")
            for _ in range(repeat):
                started = time.perf_counter()
                service.search(question.text, 5)
                best = min(best, time.perf_counter() - started)
            out[method].append(best)
    service.fusion, service.priors = new_fusion, new_priors
    return {m: (pct(v, 0.5), pct(v, 0.95)) for m, v in out.items()}


def run_size(size: int, model: Path, repeat: int) -> dict[str, Any]:
    labelled = memory_set.build()
    entries = labelled.entries + memory_set.padding(max(size - len(labelled.entries), 0))
    with tempfile.TemporaryDirectory(prefix="bonsai-bench-") as tmp:
        home = Path(tmp) / "home"
        write_store(home / "memory", entries)
        service = MemoryService(
            home, None, MemorySettings(model_path=str(model)), env={}, today=lambda: TODAY
        )
        watcher = service.watch(lambda _: None)
        try:
            service.view()
            started = time.perf_counter()
            service.sync()
            build_s = time.perf_counter() - started
            service.search("warm up", 5)
            scores: dict[str, list[float]] = defaultdict(list)
            for question in labelled.questions:
                for method, ranked in rankings(service, question).items():
                    for k in (3, 5):
                        value = recall(ranked, question.relevant, k)
                        scores[f"{method}|{question.kind}|{k}"].append(value)
                        scores[f"{method}|all|{k}"].append(value)
            latency = timings(service, labelled.questions, repeat)
            status = service.embeddings_status()
        finally:
            watcher.stop()
            service.close()
    return {
        "size": len(entries),
        "questions": len(labelled.questions),
        "build_ms_per_entry": build_s * 1000 / len(entries),
        "embeddings": status,
        "recall": {key: statistics.fmean(v) for key, v in scores.items()},
        "latency_ms": latency,
    }


def report(rows: list[dict[str, Any]], model: str) -> None:
    print(f"model: {model}")
    for row in rows:
        print(
            f"\n{row['size']} entries, {row['questions']} questions; embeddings {row['embeddings']}; "
            f"index build {row['build_ms_per_entry']:.2f} ms/entry"
        )
        head = f"{'method':<9} |" + "".join(f" {kind:>17} |" for kind in KINDS)
        head += f" {'p50 ms':>7} {'p95 ms':>7}"
        print(head)
        print(f"{'':<9} |" + "".join(f" {'R@3':>8} {'R@5':>8} |" for _ in KINDS))
        print("-" * len(head))
        for method in METHODS:
            cells = "".join(
                f" {row['recall'][f'{method}|{kind}|3']:>8.3f}"
                f" {row['recall'][f'{method}|{kind}|5']:>8.3f} |"
                for kind in KINDS
            )
            p50, p95 = row["latency_ms"].get(method, (None, None))
            timing = f" {p50:>7.2f} {p95:>7.2f}" if p50 is not None else f" {'-':>7} {'-':>7}"
            print(f"{method:<9} |{cells}{timing}")
        base, new = row["recall"]["bm25|multi-hop|5"], row["recall"]["new|multi-hop|5"]
        gain = row["recall"]["new|all|5"] - row["recall"]["bm25|all|5"]
        ratio = f"{new / base:.2f}x" if base else "n/a"
        print(f"multi-hop R@5 new/bm25: {ratio}; overall R@5 new - bm25: {gain:+.3f}")
    print("\nlatency: MemoryService.search, best of the repeats per query, watcher running;")
    print("bm25/vectors are single lanes ranked by raw score (no timing of their own).")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", type=Path, help="model2vec folder (default: configured)")
    parser.add_argument("--sizes", default="1000,10000", help="collection sizes")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per query")
    args = parser.parse_args(argv)
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
        rows = [run_size(int(s), folder, args.repeat) for s in args.sizes.split(",")]
    report(rows, label)
    return 0


if __name__ == "__main__":
    sys.exit(main())
