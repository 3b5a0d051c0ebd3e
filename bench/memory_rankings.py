"""Every bench question's ranking, to check that a speed change ranks the same.

Usage::

    .venv/bin/python bench/memory_rankings.py --size 1000 --cache DIR --model DIR \\
        --out before.json      # on the old code
    .venv/bin/python bench/memory_rankings.py --size 1000 --cache DIR --model DIR \\
        --out after.json --compare before.json

For every question of ``bench/memory_retrieval.py`` (the labelled set, the
paraphrases and the dialogue turns) and for the fusions it compares (``new``,
``new-norel``, ``previous``, ``new-novec``), records the hits of
``MemoryService``'s search at the default depth and at the full candidate
depth: ids, scores (bit for bit: JSON keeps a float's exact value), lane
evidence and second-hop sources, and the ``search`` results. ``--compare``
exits 1 naming the first question whose ranking differs. Uses the store the
benchmark keeps under ``--cache`` (build it with one run of the benchmark);
never run two processes on one cached store.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import memory_retrieval as bench
import memory_set
from bonsai.services.memory.service import MemoryService
from bonsai.settings import MemorySettings

FUSIONS = ("new-novec", "new", "new-norel", "previous")  # the model-less one first: one resync


def rankings(service: MemoryService, texts: list[str]) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for method in FUSIONS:
        with bench.Mode(service, method):
            service.search("warm up", 5)
            rows: list[Any] = []
            for text in texts:
                top = service._search_hits(text, 5)
                deep = service._search_hits(text, service.fusion.candidate_depth)
                shown = service.search(text, 5).results
                rows.append(
                    [
                        [[h.id, h.score, h.lanes.bm25, h.lanes.embedding, h.via] for h in top],
                        [[h.id, h.score, h.via] for h in deep],
                        [[r.name, r.score] for r in shown],
                    ]
                )
            out[method] = rows
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--compare", type=Path)
    args = parser.parse_args(argv)
    labelled = memory_set.build()
    _, paraphrased = bench.paraphrase_set()
    _, dialogue = memory_set.dialogue()
    texts = [q.text for q in labelled.questions + paraphrased + dialogue]
    homes = sorted(args.cache.glob(f"{args.size}-*/home"))
    if not homes:
        sys.exit(
            f"no cached store of {args.size} entries under {args.cache}: run the benchmark once"
        )
    settings = MemorySettings(model_path=str(args.model))
    service = MemoryService(homes[0], None, settings, env={}, today=lambda: bench.TODAY)
    watcher = service.watch(lambda _: None)
    try:
        service.embeddings()
        service.sync()
        found = rankings(service, texts)
    finally:
        watcher.stop()
        service.close()
    args.out.write_text(json.dumps({"questions": texts, "rankings": found}))
    print(f"{len(texts)} questions x {len(FUSIONS)} fusions written to {args.out}")
    if args.compare is None:
        return 0
    before = json.loads(args.compare.read_text())
    if before["questions"] != texts:
        print("the question sets differ")
        return 1
    for method in FUSIONS:
        for text, old, new in zip(texts, before["rankings"][method], found[method], strict=True):
            if old != new:
                print(f"{method}: the ranking of {text!r} differs:\n  {old}\n  {new}")
                return 1
    print("identical: every ranking, score, lane and source")
    return 0


if __name__ == "__main__":
    sys.exit(main())
