"""Localization on real issues: the corpus instances (bench/repomap_corpus.py),
bonsai's map beside aider's RepoMap.

    .venv/bin/python bench/repomap.py --corpus [--corpus-repos django__django,...] [--no-aider]

For every task the issue text is the mention (nothing in the chat) and the map
is asked for at 1,024, 4,096 and 8,192 tokens (chars/4 on both sides). Printed
per repository and over all tasks, for the whole set and the held-out half:

* recall @ N tokens: every answer file is in the map;
* gold in the first 1 / 5 / 10 files: the best-placed answer file is among the
  first k files of the 4,096-token map, in the map's own order (bonsai: its
  ranking; aider: the order its text lists files, which is how it reads).

bonsai runs in one fresh process per release with its tag cache kept in the
benchmark cache, so a second run parses nothing. aider's results are kept in
the cache too, keyed by release and task text (its ranking does not change
with bonsai's code), so it runs once per task.
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from repomap_corpus import CACHE, resolved_instances, split_of

BUDGETS = (1024, 4096, 8192)
PLACE_BUDGET = 4096
TOPS = (1, 5, 10)
HERE = Path(__file__).resolve().parent


def chars4(text: str) -> int:
    return (len(text) + 3) // 4


def run_ours(job: dict) -> dict:
    """Child process: every task of one release, every budget."""
    import importlib

    from bonsai.services.repomap import RepoMapService
    from bonsai.settings import RepoMapSettings

    for name, value in (job.get("params") or {}).items():  # ablations: module.CONSTANT
        module, _, attr = name.rpartition(".")
        target = importlib.import_module(f"bonsai.services.repomap.{module}")
        if not hasattr(target, attr):
            raise SystemExit(f"unknown parameter {name}")
        setattr(target, attr, value)
    service = RepoMapService(Path(job["root"]), Path(job["db"]), RepoMapSettings(), chars4)
    service.build()
    early = EarlyMaps(service) if job.get("early") else None
    out: dict[str, dict] = {}
    for task in job["tasks"]:
        per: dict[str, dict] = {"lanes": lane_places(service, task, job.get("grid") or [])}
        for tokens in job["budgets"]:
            service.forget_previous()
            result = service.get(tokens=tokens, mentions=task["text"])
            order = [f.path for f in result.files]  # the map's order: its ranking
            per[str(tokens)] = _outcome(order, task["targets"], result.tokens)
        if early is not None:
            per["early"] = early.outcomes(task, job["budgets"])
        out[task["instance"]] = per
    service.stop()
    return out


class EarlyMaps:
    """The early first map a cold build of the release hands over for a task:
    ``first_map.first_pass`` on the release's files with an empty tag cache (so
    every file is cold), its chosen files' tags delivered as the indexer would
    deliver them (taken from this warm service: the same tags a cold parse
    gives), ranked and rendered by the production code; the other budgets'
    maps of the same files by ``first_map.first_map``, as that delivery does."""

    def __init__(self, service) -> None:
        from bonsai.services.repomap.discovery import discover

        self.service = service
        self.files = discover(service.rules).files
        self.tags = service.tags

    def outcomes(self, task: dict, budgets: list[int]) -> dict | None:
        from bonsai.services.repomap.first_map import FirstRequest, first_map, first_pass
        from bonsai.services.repomap.indexer_core import FileResult
        from bonsai.services.repomap.issue_text import without_dumps

        seen: list = []
        request = FirstRequest(seen.append, (), task["text"], budgets[0])
        started = time.process_time()
        chosen = first_pass(self.service.workspace, self.files, {}, request, budgets[0], chars4)
        choice_s = time.process_time() - started  # the choice: reads, scans, fuses
        if chosen is None:
            return None  # too few files for a first map: the whole map comes as soon
        paths = sorted(p for p in chosen.paths if p in self.tags)
        chosen.deliver([FileResult(p, "parsed", None, self.tags[p]) for p in paths])
        tags = {p: self.tags[p] for p in paths}
        read = request._replace(mentions=without_dumps(task["text"]))
        maps = [seen[0]] + [first_map(tags, read, b, chars4) for b in budgets[1:]]
        out: dict = {"parsed_first": len(chosen.paths), "choice_s": choice_s}
        out["in_parsed"] = any(t in chosen.paths for t in task["targets"])
        for tokens, early in zip(budgets, maps, strict=True):
            order = [f.path for f in early.files]
            out[str(tokens)] = _outcome(order, task["targets"], early.tokens)
        return out


def _place(score, targets: list[str], files: list[str]) -> int | None:
    import numpy as np

    order = np.lexsort((np.arange(len(score)), -score)).tolist()
    position = {files[f]: i for i, f in enumerate(order) if score[f] > 0}
    found = [position[t] for t in targets if t in position]
    return min(found) if found else None


def _phrases_alone(fusion, graph, text: str):
    """The quoted-messages lane whether or not the fusion weighs it."""
    saved = fusion.W_PHRASES
    fusion.W_PHRASES = max(saved, 1.0)
    try:
        return fusion.phrases_lane(graph, text)
    finally:
        fusion.W_PHRASES = saved


def lane_places(service, task: dict, grid: list[dict]) -> dict[str, int | None]:
    """Where the best answer file sits in each lane's own file order (lexical,
    mentions, PageRank), in their fusion, and in each fusion variant of ``grid``."""
    from bonsai.services.repomap import fusion, ranking
    from bonsai.services.repomap.issue_text import without_dumps
    from bonsai.services.repomap.mentions import parse_mentions

    text, targets = without_dumps(task["text"]), task["targets"]
    state = service._state
    graph = state.current_graph()
    found = parse_mentions(text, state.path_index(graph), graph.defined, state.word_parts(graph))
    scores = ranking.text_scores(graph, text)
    ranks = ranking.pagerank_of(graph, ranking.personalization(graph, (), (), found, text, scores))
    lanes = fusion.lanes(graph, found, scores, ranks[: len(graph.files)], text)
    files = graph.files
    out = {
        "bm25": _place(lanes.bm25, targets, files),
        "lexical": _place(lanes.lexical, targets, files),
        "mentions": _place(lanes.mentions, targets, files),
        "pagerank": _place(lanes.pagerank, targets, files),
        "phrases": _place(_phrases_alone(fusion, graph, text), targets, files),
        "frames": _place(lanes.frames, targets, files),
        "title": _place(lanes.title, targets, files),
        "fused": _place(fusion.fuse(lanes), targets, files),
    }
    for i, params in enumerate(grid):
        targets_ = {k: _grid_target(fusion, k) for k in params}
        saved = {k: getattr(m, a) for k, (m, a) in targets_.items()}
        for k, v in params.items():
            setattr(*targets_[k], v)
        try:
            variant = fusion.lanes(graph, found, scores, ranks[: len(graph.files)], text)
            out[f"grid{i}"] = _place(fusion.fuse(variant), targets, files)
        finally:
            for k, v in saved.items():
                setattr(*targets_[k], v)
    return out


def _grid_target(fusion, name: str) -> tuple[object, str]:
    """A grid key: a ``fusion`` constant, or ``module.CONSTANT`` of another
    module of the repo map that the lanes read (``frames.DECAY``)."""
    import importlib

    module, _, attr = name.rpartition(".")
    target = importlib.import_module(f"bonsai.services.repomap.{module}") if module else fusion
    if not hasattr(target, attr):
        raise SystemExit(f"unknown grid parameter {name}")
    return target, attr


def _outcome(order: list[str], targets: list[str], tokens: int) -> dict:
    found = [order.index(t) for t in targets if t in order]
    return {
        "hit": all(t in order for t in targets),
        "place": min(found) if found else None,
        "files": len(order),
        "tokens": tokens,
    }


def _child(cmd: list[str], job: dict, seed: str = "0") -> dict:
    """Run ``cmd`` on ``job``, passed as ``@file`` (a large repository's file list
    is longer than an argument may be)."""
    env = dict(os.environ, PYTHONHASHSEED=seed)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(job, fh)
    try:
        proc = subprocess.run(
            [*cmd, "@" + fh.name], capture_output=True, text=True, env=env, timeout=5400
        )
    finally:
        os.unlink(fh.name)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed:\n{proc.stderr[-3000:]}")
    result: dict = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def _files(root: Path) -> list[str]:
    from bonsai.services.repomap.discovery import IgnoreRules, discover

    return [c.path for c in discover(IgnoreRules(root)).files]


def _aider_key(release: str, task: dict) -> str:
    text = json.dumps([release, task["text"], task["targets"], list(BUDGETS)])
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def run_aider(aider_py: Path, release: str, root: Path, tasks: list[dict]) -> dict[str, dict]:
    """aider's outcomes per instance, from the cache where known."""
    memo_path = CACHE / "aider-localise.json"
    try:
        memo: dict[str, dict] = json.loads(memo_path.read_text())
    except (OSError, ValueError):
        memo = {}
    todo = [t for t in tasks if _aider_key(release, t) not in memo]
    if todo:
        job = {
            "root": str(root),
            "files": _files(root),
            "tasks": todo,
            "budgets": list(BUDGETS),
            "orders": True,
        }
        driver = HERE / "repomap_aider_driver.py"
        result = _child([str(aider_py), str(driver)], job, seed="1")
        for task, per in zip(todo, result["outcomes"], strict=True):
            memo[_aider_key(release, task)] = per
        memo_path.write_text(json.dumps(memo))
    return {t["instance"]: memo[_aider_key(release, t)] for t in tasks}


def localise(
    repos: set[str] | None,
    aider_py: Path | None,
    ours_cmd: list[str],
    log: Callable[[str], None],
    params: dict | None = None,
    grid: list[dict] | None = None,
    early: bool = False,
) -> dict:
    instances = resolved_instances(only=repos)
    split = split_of(instances)
    by_release: dict[str, list[dict]] = {}
    for inst in instances:
        by_release.setdefault(f"{inst['project'].lower()}-{inst['version']}", []).append(inst)
    report: dict = {"tasks": {}, "split": split, "params": params or {}}
    for release, group in sorted(by_release.items()):
        root = Path(group[0]["root"])
        tasks = [
            {"instance": g["instance"], "text": g["text"], "targets": g["targets"]} for g in group
        ]
        log(f"{release}: {len(tasks)} tasks")
        db = CACHE / "dbs" / f"{release}.db"
        db.parent.mkdir(parents=True, exist_ok=True)
        job = {"root": str(root), "db": str(db), "tasks": tasks, "budgets": list(BUDGETS)}
        job["params"] = params or {}
        job["grid"] = grid or []
        job["early"] = early
        ours = _child(ours_cmd, job)
        theirs = run_aider(aider_py, release, root, tasks) if aider_py else {}
        for g in group:
            report["tasks"][g["instance"]] = {
                "repo": g["repo"],
                "release": release,
                "targets": g["targets"],
                "ours": ours[g["instance"]],
                "aider": theirs.get(g["instance"]),
            }
    return report


def _figures(rows: list[dict], side: str) -> dict[str, float] | None:
    outcomes = [r[side] for r in rows if r.get(side)]
    if not outcomes or len(outcomes) < len(rows):
        return None
    n = len(outcomes)
    out = {f"recall@{b}": sum(o[str(b)]["hit"] for o in outcomes) / n for b in BUDGETS}
    for k in TOPS:
        places = [o[str(PLACE_BUDGET)]["place"] for o in outcomes]
        out[f"top{k}"] = sum(p is not None and p < k for p in places) / n
    out["files@1024"] = sum(o["1024"]["files"] for o in outcomes) / n
    return out


def _line(label: str, n: int, ours: dict | None, theirs: dict | None) -> str:
    def cells(f: dict | None) -> str:
        if f is None:
            return "   n/a" * 6
        keys = [f"top{k}" for k in TOPS] + [f"recall@{b}" for b in BUDGETS]
        return "".join(f"{f[k]:6.2f}" for k in keys)

    return f"{label:<28}{n:>4} {cells(ours)}  |{cells(theirs)}"


LANES = ("bm25", "lexical", "mentions", "pagerank", "phrases", "frames", "title", "fused")


def print_lanes(report: dict, grid: list[dict] | None = None) -> None:
    """First 1 / 5 / 10 of each lane alone and of their fusion, per half and
    per repository (the map's own order is the "map" column)."""
    tasks, split = report["tasks"], report["split"]
    names = [*LANES, *(f"grid{i}" for i in range(len(grid or [])))]
    groups: dict[str, list[str]] = {"ALL": sorted(tasks)}
    groups["tune half"] = [i for i in sorted(tasks) if split.get(i) == "tune"]
    groups["held-out half"] = [i for i in sorted(tasks) if split.get(i) == "held-out"]
    for i in sorted(tasks):
        groups.setdefault(tasks[i]["repo"].split("__")[1], []).append(i)
    print("\nfirst 1 / 5 / 10 files, per lane (map: the 4,096-token map's order)")
    print(f"{'':<16}{'n':>4}" + "".join(f"{n:>16}" for n in ["map", *names]))
    for label, ids in groups.items():
        cells = []
        for lane in ["map", *names]:
            places = [
                tasks[i]["ours"][str(PLACE_BUDGET)]["place"]
                if lane == "map"
                else tasks[i]["ours"]["lanes"].get(lane)
                for i in ids
            ]
            n = max(1, len(places))
            fig = [sum(p is not None and p < k for p in places) / n for k in TOPS]
            cells.append("{:.2f}/{:.2f}/{:.2f}".format(*fig))
        print(f"{label:<16}{len(ids):>4}" + "".join(f"{c:>16}" for c in cells))
    for i, params in enumerate(grid or []):
        print(f"  grid{i}: {json.dumps(params, sort_keys=True)}")


def print_early(report: dict) -> None:
    """The early first map beside the full map of the same task and budget: gold
    in the first 1 / 5 / 10 files (4,096 tokens) and recall at each budget, over
    the tasks of releases large enough for a first map."""
    tasks, split = report["tasks"], report["split"]
    rows = {i: t for i, t in tasks.items() if t.get("ours", {}).get("early")}
    if not rows:
        return
    groups: dict[str, list[str]] = {"ALL": sorted(rows)}
    groups["tune half"] = [i for i in sorted(rows) if split.get(i) == "tune"]
    groups["held-out half"] = [i for i in sorted(rows) if split.get(i) == "held-out"]
    for i in sorted(rows):
        groups.setdefault(rows[i]["repo"].split("__")[1], []).append(i)
    keys = [*(f"@{k}" for k in TOPS), *(f"r{b // 1024}k" for b in BUDGETS)]
    head = "".join(f"{h:>6}" for h in keys)
    print(f"\nearly first map | full map (the same tasks; {len(rows)} of {len(tasks)} tasks")
    print("have a first map: the others' releases are too small for one)")
    print(f"{'':<18}{'n':>4}{'in first':>9} {head}  |{head}")

    def cells(ids: list[str], side: str) -> str:
        n = max(1, len(ids))
        outs = [rows[i]["ours"]["early"] if side == "early" else rows[i]["ours"] for i in ids]
        places = [o[str(PLACE_BUDGET)]["place"] for o in outs]
        figs = [sum(p is not None and p < k for p in places) / n for k in TOPS]
        figs += [sum(o[str(b)]["hit"] for o in outs) / n for b in BUDGETS]
        return "".join(f"{f:6.2f}" for f in figs)

    for label, ids in groups.items():
        parsed = sum(rows[i]["ours"]["early"]["in_parsed"] for i in ids) / max(1, len(ids))
        print(
            f"{label:<18}{len(ids):>4}{parsed:>9.2f} {cells(ids, 'early')}  |{cells(ids, 'full')}"
        )
    print("in first: share of tasks with a gold file among the files parsed first")
    by_release: dict[str, list[float]] = {}
    for row in rows.values():
        spent = row["ours"]["early"].get("choice_s")
        if spent is not None:
            by_release.setdefault(row["release"], []).append(spent)
    cells_ = [
        f"{release} {statistics.median(times):.3f} s"
        for release, times in sorted(by_release.items())
        if len(times) >= 5
    ]
    if cells_:
        print("the choice's CPU per task (median, this process; load distorts it):")
        print("  " + ", ".join(cells_))


def print_localise(report: dict) -> None:
    tasks = report["tasks"]
    split = report["split"]
    head = "".join(f"{h:>6}" for h in ("@1", "@5", "@10", "r1k", "r4k", "r8k"))
    print(f"\n{'':<28}{'n':>4} {head}  |{head}")
    print(f"{'':<28}{'':>4} {'bonsai: gold in first k files, recall':<36}  |aider")
    groups: dict[str, list[dict]] = {}
    for instance, row in sorted(tasks.items()):
        groups.setdefault(row["repo"].split("__")[1], []).append({**row, "instance": instance})
    for repo, rows in sorted(groups.items()):
        print(_line(repo, len(rows), _figures(rows, "ours"), _figures(rows, "aider")))
    every = [{**row, "instance": i} for i, row in sorted(tasks.items())]
    held = [r for r in every if split.get(r["instance"]) == "held-out"]
    tune = [r for r in every if split.get(r["instance"]) == "tune"]
    for label, rows in (("ALL", every), ("tune half", tune), ("held-out half", held)):
        print(_line(label, len(rows), _figures(rows, "ours"), _figures(rows, "aider")))
    fills = [row["ours"][str(b)]["tokens"] / b for row in every for b in BUDGETS if row.get("ours")]
    if fills:
        print(f"budget fill (tokens / budget): {min(fills):.3f}-{max(fills):.3f}")
    ours = _figures(every, "ours")
    if ours:
        print(f"mean files shown at 1,024 tokens: bonsai {ours['files@1024']:.1f}", end="")
        theirs = _figures(every, "aider")
        print(f", aider {theirs['files@1024']:.1f}" if theirs else "")


if __name__ == "__main__":  # child process for one release: repomap_localise.py JOB
    arg = sys.argv[1]
    job = json.loads(Path(arg[1:]).read_text() if arg.startswith("@") else arg)
    print(json.dumps(run_ours(job)))
