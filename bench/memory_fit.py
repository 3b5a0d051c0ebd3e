"""Fit the memory fusion's weights on the labelled set's tune half.

Usage::

    .venv/bin/python bench/memory_fit.py --store DIR [--model DIR] [--passes 2]
        [--dialogue-store DIR]

``--store`` is a store the retrieval bench cached (``--cache``: its
``<size>-<digest>`` folder), opened read-only in spirit (one process at a
time). A coordinate search: from the defaults, each knob in turn over a few
values, keeping a value only when it raises the mean recall@5 of the *tune*
questions (the generated set's and the paraphrase set's tune halves) by more
than one question's worth; then the chosen setting and the defaults are
reported side by side on every part: tune, test, the varied templates and,
with ``--dialogue-store`` (a store cached with ``--dialogue``), the held-out
conversation turns. Nothing is chosen on test, varied or dialogue.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import memory_retrieval as bench
import memory_set
from bonsai.services.memory.service import MemoryService
from bonsai.settings import MemorySettings
from memory_set import TODAY, Question

# knob -> (which params object, the values tried)
GRID: dict[str, tuple[str, list[Any]]] = {
    "part_weight": ("fusion", [0.25, 0.5, 0.75, 1.0]),
    "feedback_weight": ("fusion", [0.7, 0.8, 0.9]),
    "embedding_weight": ("fusion", [0.15, 0.3, 0.45]),
    "rank_bonus": ("fusion", [0.05, 0.1, 0.2]),
    "embedding_gap_floor": ("fusion", [0.0, 0.5, 1.0, 1.5]),
    "embedding_gap_full": ("fusion", [2.0, 3.0, 4.0, 5.0]),
    "z_member": ("fusion", [1.5, 2.0, 2.5, 3.0]),
    "date_match": ("priors", [0.15, 0.3, 0.5]),
}


def evaluate(
    service: MemoryService, questions: list[Question], setting: dict[str, Any]
) -> list[float]:
    fusion = {k: v for k, v in setting.items() if GRID[k][0] == "fusion"}
    priors = {k: v for k, v in setting.items() if GRID[k][0] == "priors"}
    saved = service.fusion, service.priors
    service.fusion = service.fusion.model_copy(update=fusion)
    service.priors = service.priors.model_copy(update=priors)
    try:
        return [
            bench.recall([h.name for h in service.search(q.text, 5).results], q.relevant, 5)
            for q in questions
        ]
    finally:
        service.fusion, service.priors = saved


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def open_service(store: Path, model: Path) -> MemoryService:
    service = MemoryService(
        store / "home", None, MemorySettings(model_path=str(model)), env={}, today=lambda: TODAY
    )
    service.sync()
    return service


def parts(questions: list[Question]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for i, q in enumerate(questions):
        keys = [q.kind] if q.kind == "dialogue" else [bench.split_of(q)]
        if q.kind not in ("paraphrase", "dialogue"):
            keys.append(bench.template_of(q))
        if q.kind == "paraphrase":
            keys = [f"paraphrase-{bench.split_of(q)}"]
        for key in keys:
            out.setdefault(key, []).append(i)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--dialogue-store", type=Path)
    parser.add_argument("--model", type=Path, default=Path("/tmp/memory-model/minilm-256"))
    parser.add_argument("--passes", type=int, default=2)
    args = parser.parse_args(argv)
    labelled = memory_set.build()
    _, paraphrase = bench.paraphrase_set()
    questions = labelled.questions + paraphrase
    tune = [q for q in questions if bench.split_of(q) == "tune"]
    service = open_service(args.store, args.model)
    setting: dict[str, Any] = {}
    best = sum(evaluate(service, tune, setting))
    print(f"defaults: tune R@5 {best / len(tune):.4f} ({len(tune)} questions)")
    for _ in range(args.passes):
        for knob, (_, values) in GRID.items():
            for value in values:
                trial = {**setting, knob: value}
                score = sum(evaluate(service, tune, trial))
                if score > best + 1.0:  # more than one question's worth
                    best, setting = score, trial
                    print(f"  {knob} = {value}: tune R@5 {score / len(tune):.4f}")
                    sys.stdout.flush()
    print(f"chosen: {setting or 'the defaults'}")
    rows: dict[str, dict[str, float]] = {"default": {}, "fitted": {}}
    index = parts(questions)
    for name, chosen in (("default", {}), ("fitted", setting)):
        values = evaluate(service, questions, chosen)
        for key, members in index.items():
            rows[name][key] = mean([values[i] for i in members])
    service.close()
    if args.dialogue_store is not None:
        _, talk = memory_set.dialogue()
        dialogue_service = open_service(args.dialogue_store, args.model)
        for name, chosen in (("default", {}), ("fitted", setting)):
            rows[name]["dialogue"] = mean(evaluate(dialogue_service, talk, chosen))
        dialogue_service.close()
    keys = ["tune", "test", "first", "varied", "paraphrase-tune", "paraphrase-test", "dialogue"]
    print("R@5     " + " ".join(f"{k:>15}" for k in keys))
    for name, row in rows.items():
        print(f"{name:<7} " + " ".join(f"{row.get(k, float('nan')):>15.3f}" for k in keys))
    return 0


if __name__ == "__main__":
    sys.exit(main())
