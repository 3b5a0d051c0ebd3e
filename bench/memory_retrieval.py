"""Memory retrieval benchmark: BM25-only vs embeddings-only vs hybrid.

Usage::

    .venv/bin/python bench/memory_retrieval.py [--model DIR] [--sizes 1000,10000]

The labelled set (bench/data/memory_labelled.json) holds 49 hand-written
facts that paraphrase the sample agent sessions and library documentation,
and 56 questions asking for them in other words. For each collection size the
facts are mixed with generated distractor entries (developer-flavoured
sentences from word banks; none is relevant to any question). Reported per
size: index build time (FTS5 + embeddings), query latency p50/p95 of each lane
and of the fused search, and recall@3 / recall@5 of each method. The BM25 lane
is the baseline; ratios are printed beside it.

The model defaults to the configured memory model
(``$BONSAI_HOME/cache/memory-model``, built with ``bonsai memory model
build``); without one only the BM25 lane is measured.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections import defaultdict
from datetime import date, timedelta
from functools import partial
from pathlib import Path
from typing import Any

from bonsai.core.retrieval.documents import Doc, FusedHit, Lane, LaneScores
from bonsai.core.retrieval.fusion import FusionParams, fuse, lane_only
from bonsai.core.retrieval.priors import PriorParams, memory_prior
from bonsai.services.config import bonsai_home, load_settings
from bonsai.services.memory.embedding import StaticEmbedder, model_dir
from bonsai.services.retrieval import HybridIndex, open_index
from bonsai.services.retrieval.embedder import normalise_rows
from bonsai.services.retrieval.lanes import bm25_lane, embedding_lane

DATA = Path(__file__).parent / "data" / "memory_labelled.json"
TODAY = date(2026, 7, 1)

SUBJECTS = """the parser|the tokenizer|the cache layer|the job scheduler|the command line tool|
the config loader|the database migration|the HTTP client|the test harness|the build script|
the logger|the JSON serializer|the plugin loader|the compiler pass|the linter config|
the editor extension|the image decoder|the upload handler|the session store|the rate limiter|
the release workflow|the docs site|the websocket server|the retry policy|the metrics exporter|
the dependency pinning|the Docker image|the CI pipeline|the auth middleware|the search index"""
VERBS = """must not|should always|is allowed to|was changed to|fails when it tries to|needs to|
silently refuses to|used to|is configured to|crashes if asked to"""
OBJECTS = """retry failed requests|write files outside the workspace|load settings from the home
directory|use UTC timestamps|round values to the nearest unit|parse nested tuples|run on two
cores|cache results between runs|emit warnings as errors|pin exact versions|skip network tests|
stream large responses|validate input eagerly|normalise file paths|print progress bars|lock the
database during writes|handle unicode file names|compress old logs|reuse connections|fall back
to defaults|format code before commit|read environment variables|keep backward compatibility|
decode float images|escape shell arguments|measure latency percentiles|batch embedding requests|
deduplicate near-identical entries|watch files for changes|serialise durations in milliseconds"""
REASONS = """because the vendor API is flaky|after the incident in March|since the lead asked for
it|to keep the prompt cache warm|or the nightly job times out|because users run it offline|as
agreed in the design review|so the benchmark stays comparable|because of a licence constraint|
to avoid a race with the watcher thread|since Windows paths differ|for reproducible builds"""
EXTRAS = """See the notes in the wiki.|Revisit when upgrading the runtime.|Owner: platform team.|
A regression test covers it.|Measured on the staging box.|Temporary until the refactor lands.|
Discussed with the maintainers.|Applies to version 2 onwards."""


def _bank(text: str) -> list[str]:
    return [" ".join(item.split()) for item in text.split("|")]


def distractors(count: int, seed: int = 7) -> list[Doc]:
    """Generated entries; tiers and update dates vary so priors apply to them too."""
    rng = random.Random(seed)
    subjects, verbs, objects = _bank(SUBJECTS), _bank(VERBS), _bank(OBJECTS)
    reasons, extras = _bank(REASONS), _bank(EXTRAS)
    docs = []
    for i in range(count):
        text = f"{rng.choice(subjects).capitalize()} {rng.choice(verbs)} {rng.choice(objects)} "
        text += f"{rng.choice(reasons)}."
        if rng.random() < 0.6:
            text += (
                f" {rng.choice(subjects).capitalize()} {rng.choice(verbs)} {rng.choice(objects)}."
            )
        if rng.random() < 0.5:
            text += " " + rng.choice(extras)
        meta: dict[str, Any] = {
            "tier": rng.choice(["user", "project"]),
            "updated": (TODAY - timedelta(days=rng.randrange(365))).isoformat(),
        }
        docs.append(Doc(id=f"distractor-{i:05d}", text=f"note {i}\n{text}", meta=meta))
    return docs


def labelled() -> tuple[list[Doc], list[dict[str, Any]]]:
    data = json.loads(DATA.read_text(encoding="utf-8"))
    updated = (TODAY - timedelta(days=30)).isoformat()
    docs = [
        Doc(
            id=e["name"],
            text=f"{e['name'].replace('-', ' ')}\n{e['description']}\n{e['body']}",
            meta={"tier": e["tier"], "updated": updated},
        )
        for e in data["entries"]
    ]
    return docs, data["queries"]


def plain_rrf(lexical: Lane, semantic: Lane | None, k: int = 60) -> list[FusedHit]:
    """Equal-weight reciprocal-rank fusion without floors: the common default,
    shown for comparison only."""
    scores: dict[str, float] = {}
    for lane in (lexical, semantic or Lane()):
        for rank, (doc_id, _) in enumerate(lane.hits, 1):
            scores[doc_id] = scores.get(doc_id, 0.0) + 1.0 / (k + rank)
    ordered = sorted(scores, key=lambda d: (-scores[d], d))
    return [FusedHit(id=d, score=scores[d], lanes=LaneScores()) for d in ordered]


def recall(ranked: list[FusedHit], relevant: list[str], k: int) -> float:
    top = {hit.id for hit in ranked[:k]}
    return len(top & set(relevant)) / len(relevant)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000


def timed(call: Any, repeat: int = 3) -> tuple[Any, float]:
    """Result of ``call()`` and its best wall time over ``repeat`` runs (the
    minimum is the least disturbed by other load on the machine)."""
    best, result = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        result = call()
        best = min(best, time.perf_counter() - started)
    return result, best


def run_size(size: int, embedder: StaticEmbedder | None, use_priors: bool) -> dict[str, Any]:
    docs, queries = labelled()
    docs += distractors(max(size - len(docs), 0))
    conn = open_index(":memory:")
    index = HybridIndex(conn, "bench", embedder)
    started = time.perf_counter()
    index.sync(docs, f"bench-{size}")
    build_s = time.perf_counter() - started
    prior_params = PriorParams() if use_priors else PriorParams(project_tier=0, recency=0)
    priors = {doc.id: memory_prior(doc.meta, TODAY, prior_params) for doc in docs}
    times: dict[str, list[float]] = {"bm25": [], "embedding": [], "hybrid": []}
    scores: dict[str, list[float]] = defaultdict(list)
    index.search("warm up the caches", 5)
    for query in queries:
        for method, seconds in measure_latency(index, query["query"], prior_params).items():
            times[method].append(seconds)
        rankings = rank_all(index, query["query"], priors)
        for method, ranked in rankings.items():
            for k in (3, 5):
                scores[f"{method}@{k}"].append(recall(ranked, query["relevant"], k))
    conn.close()
    return {
        "embeddings": embedder is not None,
        "size": len(docs),
        "build_s": build_s,
        "latency_ms": {m: (pct(v, 0.5), pct(v, 0.95)) for m, v in times.items()},
        "recall": {key: statistics.fmean(v) for key, v in scores.items()},
    }


def measure_latency(index: HybridIndex, text: str, prior_params: PriorParams) -> dict[str, float]:
    """Best-of-3 wall time of each lane alone and of the whole search call."""
    params = FusionParams()
    search_prior = partial(memory_prior, today=TODAY, params=prior_params)
    depth = params.candidate_depth
    return {
        "bm25": timed(partial(bm25_lane, index.conn, index.namespace, text, depth))[1],
        "embedding": timed(partial(_embedding_lane, index, text, params))[1],
        "hybrid": timed(partial(index.search, text, 5, params=params, prior=search_prior))[1],
    }


def rank_all(index: HybridIndex, text: str, priors: dict[str, float]) -> dict[str, list[FusedHit]]:
    """The ranking of every method from the same two lanes."""
    params = FusionParams()
    lexical = bm25_lane(index.conn, index.namespace, text, params.candidate_depth)
    semantic = _embedding_lane(index, text, params)
    return {
        "bm25": lane_only(lexical, params, embedding=False),
        "embedding": lane_only(semantic, params, embedding=True),
        "hybrid": fuse(lexical, semantic, params, priors),
        "rrf": plain_rrf(lexical, semantic),
    }


def _embedding_lane(index: HybridIndex, text: str, params: FusionParams) -> Lane | None:
    if index.embedder is None:
        return None
    vector = normalise_rows(index.embedder.encode([text]))[0]
    matrix = index._matrix()  # the same cached matrix search() uses
    return embedding_lane(matrix, vector, params.candidate_depth, index._background_vectors())


def report(results: list[dict[str, Any]], embeddings: str) -> None:
    print(f"embeddings: {embeddings}")
    header = f"{'entries':>8} {'index s':>8} | {'method':<10} {'p50 ms':>7} {'p95 ms':>7} |"
    header += f" {'R@3':>6} {'R@5':>6} | {'R@3 vs bm25':>11} {'R@5 vs bm25':>11}"
    print(header)
    print("-" * len(header))
    for row in results:
        base3, base5 = row["recall"]["bm25@3"], row["recall"]["bm25@5"]
        methods = (
            ("bm25", "embedding", "hybrid", "rrf") if row["embeddings"] else ("bm25", "hybrid")
        )
        for i, method in enumerate(methods):
            p50, p95 = row["latency_ms"].get(method, (None, None))
            r3, r5 = row["recall"][f"{method}@3"], row["recall"][f"{method}@5"]
            lead = f"{row['size']:>8} {row['build_s']:>8.2f}" if i == 0 else " " * 17
            timing = f"{p50:>7.2f} {p95:>7.2f}" if p50 is not None else f"{'-':>7} {'-':>7}"
            line = f"{lead} | {method:<10} {timing} | {r3:>6.3f} {r5:>6.3f} |"
            line += f" {_ratio(r3, base3):>11} {_ratio(r5, base5):>11}"
            print(line)
    print("latency: best of 3 runs per query; embedding includes encoding the query;")
    print("hybrid is the whole search call (both lanes, fusion, metadata).")
    print("rrf: plain equal-weight reciprocal-rank fusion (k=60) of the same lanes, for comparison")


def _ratio(value: float, base: float) -> str:
    return f"{value / base:.2f}x" if base else "n/a"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", type=Path, help="model2vec folder (default: configured)")
    parser.add_argument("--sizes", default="49,300,1000,10000", help="collection sizes")
    parser.add_argument(
        "--no-priors", action="store_true", help="hybrid without tier/recency priors"
    )
    args = parser.parse_args(argv)
    home = bonsai_home()
    folder = args.model or model_dir(home, load_settings(home, None).settings.memory)
    embedder = StaticEmbedder(folder) if folder.is_dir() else None
    status = f"on ({folder})" if embedder else f"off: no model at {folder}"
    sizes = [int(s) for s in args.sizes.split(",")]
    results = [run_size(size, embedder, not args.no_priors) for size in sizes]
    report(results, status + ("; priors off" if args.no_priors else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
