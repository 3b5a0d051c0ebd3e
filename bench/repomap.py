"""Benchmark: bonsai's repository map side by side with aider's RepoMap.

    .venv/bin/python bench/repomap.py [--repos stdlib,pydantic] [--tasks 24] [--aider-runs 2]

Both tools map the same copied source trees (under bench/out/repos, gitignored)
with the same file list and the same token estimate (chars/4). aider-chat is
installed into its own virtualenv under bench/out/aider-venv on first use and
driven through bench/repomap_aider_driver.py in a subprocess; bonsai runs in
subprocesses of this script too, so every figure comes from a fresh process.

Figures: cold build (empty cache -> first map; and the early first map a cold
build hands over from the files that matter most, ``first_map.py``), warm build (filled cache, new
process -> first map; ``--warm-runs`` processes, the spread is printed),
incremental update (one file edited -> new map: a first edit, then the middle
of three in a row that each keep the file's names and of three that each add
one more function, named anew in every run; wall and CPU time, as the machine
may be shared; the service long-lived, as the daemon's is), peak RSS
of the whole process tree (``bonsai.dev.tree_rss``, sampled from a process of its
own: ``repomap_sampler.py``),
and file-localization recall: tasks written like issues that name identifiers
(never files); a task is a hit when its defining file appears in the map, at
1,024 and 4,096 tokens. aider varies between runs, so it runs ``--aider-runs``
times with different hash seeds and the spread is printed. ``--timeline`` then
prints where each cold build's parsers wait (``repomap_timeline.py``).

``--recall-only --families named,prose,swe`` measures only localization, per
task family (bench/repomap_tasks.py): identifier-naming tasks, behaviour-only
tasks made from docstrings, and real SWE-bench issues with the files of their
patch as the answer (repositories marshmallow and pydicom come from PyPI sdists).

``--corpus --cold`` times cold builds of every corpus release (and marshmallow,
pydicom), one fresh process and empty cache per build, beside a plain parse of
the same files in the same process (bench/repomap_cold.py).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

from repomap_cold import cold_builds, corpus_releases, print_cold, save
from repomap_corpus import CACHE
from repomap_localise import localise, print_early, print_lanes, print_localise
from repomap_sampler import OutsideSampler
from repomap_tasks import (
    SWE_REPOS,
    fetch_sdist,
    make_prose_tasks,
    swe_instances,
    swe_tasks,
    targets_of,
)

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
REPOS = OUT / "repos"
AIDER_VENV = CACHE / "aider-venv"  # outside the repository, shared by every checkout
AIDER_PY = AIDER_VENV / "bin" / "python"
DRIVER = HERE / "repomap_aider_driver.py"
BUDGETS = (1024, 4096)
EDIT_TARGET = {"stdlib": "json/decoder.py", "pydantic": "fields.py"}
TEMPLATES = (
    "{q}() raises TypeError when it is given an empty list.",
    "Calling {q} twice leaks memory; the second call should reuse the first result.",
    "The result of {q} is wrong for non-ASCII input, please fix it.",
    "{q} ignores the timeout argument that the caller passes in.",
)


def chars4(text: str) -> int:
    return (len(text) + 3) // 4


# -- repositories --------------------------------------------------------------


def _source_dir(name: str) -> Path:
    if name == "stdlib":
        return Path(sysconfig.get_paths()["stdlib"])
    import importlib

    module = importlib.import_module(name)
    return Path(module.__file__ or "").parent


SDISTS = dict(SWE_REPOS.values())  # project -> version
# real repositories for the timing and memory figures (source releases from PyPI)
SDISTS.update({"sympy": "1.12"})


def prepare_repo(name: str) -> Path:
    dest = REPOS / name
    if name in SDISTS:
        fetch_sdist(name, SDISTS[name], dest, OUT / "sdists")
    elif not dest.exists():
        ignore = shutil.ignore_patterns("site-packages", "__pycache__", "*.pyc", ".aider*")
        shutil.copytree(_source_dir(name), dest, ignore=ignore)
    shutil.rmtree(dest / ".aider.tags.cache.v4", ignore_errors=True)
    return dest


def ensure_aider() -> str | None:
    """Install aider-chat into its own venv; None when ready, else why not."""
    if AIDER_PY.exists():
        return None
    print("installing aider-chat into", AIDER_VENV, "(once)", flush=True)
    try:
        subprocess.run([sys.executable, "-m", "venv", str(AIDER_VENV)], check=True)
        subprocess.run(
            [str(AIDER_PY), "-m", "pip", "install", "-q", "aider-chat"],
            check=True,
            timeout=1200,
        )
    except (subprocess.SubprocessError, OSError) as exc:
        shutil.rmtree(AIDER_VENV, ignore_errors=True)
        return f"aider-chat could not be installed: {exc}"
    return None


# -- tasks ---------------------------------------------------------------------


def _good_target(path: str, kind: str, name: str) -> bool:
    """Library code (not tests), a class/function/method with a specific name."""
    from bonsai.services.repomap.graph import is_specific

    library = not any(p in ("test", "tests", "idlelib") for p in path.split("/"))
    specific = len(name) >= 8 and is_specific(name) and not name.startswith("_")
    return library and specific and kind in ("class", "function", "method")


def make_tasks(root: Path, count: int, seed: int = 7) -> list[dict[str, str]]:
    """Issue-like texts naming a unique, specific identifier of library code."""
    from bonsai.services.repomap.discovery import IgnoreRules, discover
    from bonsai.services.repomap.indexer import index_files

    files = discover(IgnoreRules(root)).files
    results = index_files(root, files, {}, workers=2)
    definers: dict[str, set[str]] = {}
    candidates: list[tuple[str, str]] = []
    for res in results:
        if res.tags is None:
            continue
        enclosing: dict[int, str] = {}
        for d in res.tags.definitions:
            definers.setdefault(d.name, set()).add(res.path)
            enclosing[d.depth] = d.name
            if _good_target(res.path, d.kind, d.name):
                owner = enclosing.get(d.depth - 1) if d.kind == "method" else None
                candidates.append((res.path, f"{owner}.{d.name}" if owner else d.name))
    unique = sorted((p, q) for p, q in candidates if len(definers[q.rsplit(".", 1)[-1]]) == 1)
    picked = random.Random(seed).sample(unique, min(count, len(unique)))
    return [
        {"text": TEMPLATES[i % len(TEMPLATES)].format(q=q), "target": path}
        for i, (path, q) in enumerate(picked)
    ]


def family_tasks(name: str, root: Path, files: list[str], families: list[str], count: int):
    """Tasks of the wanted families for one repository (``family`` and ``targets`` set)."""
    tasks: list[dict] = []
    if "named" in families:
        tasks += [
            {"family": "named", "text": t["text"], "targets": [t["target"]]}
            for t in make_tasks(root, count)
        ]
    if "prose" in families:
        tasks += make_prose_tasks(root, files, count)
    if "swe" in families:
        for instance in swe_instances():
            if SWE_REPOS[instance["instance"]][0] == name:
                tasks += swe_tasks(instance)
    return tasks


# -- bonsai side (runs in a child process: --ours JOB) --------------------------


def _shown(text: str, task: dict) -> bool:
    """Every file of the task's answer is in the map."""
    shown = {line.rstrip(":") for line in text.splitlines()}
    return all(rel in shown for rel in targets_of(task))


def run_ours(job: dict) -> dict:
    from bonsai.services.repomap import RepoMapService
    from bonsai.services.repomap.first_map import FirstRequest
    from bonsai.settings import RepoMapSettings

    root, db = Path(job["root"]), Path(job["db"])
    out: dict = {}
    sampler = OutsideSampler()  # in a process of its own: no GIL or CPU taken from the build
    t0, c0 = time.perf_counter(), time.process_time()
    service = RepoMapService(root, db, RepoMapSettings(), chars4)
    first = None
    if job.get("first_map"):  # a session's first map: the task's words, 1,024 tokens

        def on_first(early) -> None:
            out["first_map_s"] = time.perf_counter() - t0
            out["first_map_cpu_s"] = time.process_time() - c0  # this process's, by then
            out["first_map_files"] = len(early.files)

        text = job["tasks"][0]["text"] if job["tasks"] else ""
        first = FirstRequest(on_first, (), text, 1024)
    stats = service.build(first=first)
    out["build_only_s"] = time.perf_counter() - t0
    service.get(tokens=1024)
    out["build_s"] = time.perf_counter() - t0
    out["build_cpu_s"] = time.process_time() - c0
    # + the parse workers, once reaped: a worker reaped after this is missing (the
    # sampler's figure below does not depend on it and replaces this one)
    out["build_tree_cpu_rusage_s"] = out["build_cpu_s"] + _children_cpu()
    out["peak_tree_mb"], out["peak_worker_mb"] = sampler.stop()  # the build, summed
    out["build_tree_cpu_s"] = sampler.tree_cpu_s  # from outside: reaped or not
    out["load"] = os.getloadavg()[0]
    out["graph"] = service.graph_origin
    out["parsed"], out["shared"], out["trusted"] = stats.parsed, stats.shared, stats.trusted
    if job["tasks"]:  # a session's first map has the user's words to rank by
        t1 = time.perf_counter()
        service.get(tokens=1024, mentions=job["tasks"][0]["text"])
        out["first_mention_s"] = time.perf_counter() - t1
        service.forget_previous()
    if job.get("touch"):
        task = job["tasks"][0]["text"] if job["tasks"] else ""
        # edits happen in the daemon, whose service is long-lived: its first map
        # readied the process for them (heap.py, grammar_warmup.py), untimed here
        service.keep_for_edits()
        service.get(tokens=1024, mentions=task)
        service.forget_previous()
        out.update(_edits(service, root / job["touch"], task))
    hits: dict[str, list[bool]] = {}
    places: dict[str, list[int | None]] = {}  # where the first gold file is in the map
    for tokens in job.get("budgets", []):
        hits[str(tokens)], places[str(tokens)] = [], []
        for task in job["tasks"]:
            service.forget_previous()
            result = service.get(tokens=tokens, mentions=task["text"])
            hits[str(tokens)].append(_shown(result.text, task))
            order = [f.path for f in result.files]  # the map's order: its ranking
            found = [order.index(t) for t in targets_of(task) if t in order]
            places[str(tokens)].append(min(found) if found else None)
    out["hits"] = hits
    out["places"] = places
    files = job["files"]
    out["parse_only_s"], out["parse_only_cpu_s"] = parse_only(root, files)
    if job.get("touch"):
        one = sorted(parse_only(root, [job["touch"]])[1] for _ in range(5))
        out["parse_edited_cpu_s"] = one[2]
    service.stop()
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["peak_child_rss_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return out


def parse_only(root: Path, files: list[str]) -> tuple[float, float]:
    """A plain single-threaded tree-sitter parse of the same files, nothing else
    (read, parse, drop): (wall, CPU) seconds. Every timing is also printed as a
    ratio to this, since the machine's load moves absolute times."""
    import tree_sitter as ts

    from bonsai.services.repomap.languages import language_for_path, load_language

    parsers: dict[str, ts.Parser] = {}
    for rel in files:  # grammars loaded outside the timing, as a warm process has them
        lang = language_for_path(rel)
        if lang and lang not in parsers and (grammar := load_language(lang)) is not None:
            parsers[lang] = ts.Parser(grammar)
    t0, c0 = time.perf_counter(), time.process_time()
    for rel in files:
        parser = parsers.get(language_for_path(rel) or "")
        if parser is not None:
            parser.parse((root / rel).read_bytes())
    return time.perf_counter() - t0, time.process_time() - c0


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed_edit(service, target: Path, text: str, task: str = "") -> tuple[float, float]:
    target.write_text(text)
    t0, c0 = time.perf_counter(), time.process_time()
    service.update_paths([target])
    service.get(tokens=1024, mentions=task)
    return time.perf_counter() - t0, time.process_time() - c0


def _edits(service, target: Path, task: str = "") -> dict:
    """One file edited, then the map asked for with the session's task text: the
    first edit (loads the grammar), then three that each keep every name of the
    file as it was just before (a changed comment), then three that each add one
    more function; wall and CPU seconds (CPU: what the process itself spent,
    whatever the load), the middle of each three."""
    original = target.read_text()
    out: dict = {}
    first = original + "\n# first edit\n"
    out["incremental_first_s"] = _timed_edit(service, target, first, task)[0]
    body = [
        _timed_edit(service, target, original + f"\n# an edit, no new name {k}\n", task)
        for k in range(3)
    ]
    added, text = [], original
    run = os.getpid()  # names no earlier run left in the saved graph: new to it
    for k in range(3):
        text += f"\n\ndef bench_added_{run}_{k}():\n    pass\n"
        added.append(_timed_edit(service, target, text, task))
    for key, runs in (("incremental_body", body), ("incremental", added)):
        out[key + "_s"] = sorted(r[0] for r in runs)[1]
        out[key + "_cpu_s"] = sorted(r[1] for r in runs)[1]
    _timed_edit(service, target, original)  # back as it was: the saved graph matches the disk
    return out


CLI_ARGV = (["--version"], ["repomap", "{root}", "--tokens", "1024"])


def cli_times(root: Path, runs: int = 3) -> dict[str, dict[str, float]]:
    """Wall and CPU seconds of the ``bonsai`` console script to its output (the
    median of ``runs``), each in a fresh process; ``repomap`` on a warm cache
    (one run beforehand fills it). A home of its own under bench/out."""
    home = OUT / "cli-home"
    shutil.rmtree(home, ignore_errors=True)
    env = dict(os.environ, BONSAI_HOME=str(home))
    script = shutil.which("bonsai") or "bonsai"
    out: dict[str, dict[str, float]] = {}
    for argv in CLI_ARGV:
        cmd = [script, *(a.format(root=root) for a in argv)]
        subprocess.run(cmd, capture_output=True, env=env, check=True)  # fills the cache
        walls, cpus = [], []
        for _ in range(runs):
            before = _children_cpu()
            t0 = time.perf_counter()
            subprocess.run(cmd, capture_output=True, env=env, check=True)
            walls.append(time.perf_counter() - t0)
            cpus.append(_children_cpu() - before)
        out[argv[0]] = {"wall_s": sorted(walls)[runs // 2], "cpu_s": sorted(cpus)[runs // 2]}
    return out


def _child(cmd: list[str], job: dict, seed: str = "0") -> dict:
    env = dict(os.environ, PYTHONHASHSEED=seed)
    proc = subprocess.run(
        [*cmd, json.dumps(job)], capture_output=True, text=True, env=env, timeout=3600
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# -- orchestration -------------------------------------------------------------


def _restore(root: Path, rel: str, original: str) -> None:
    (root / rel).write_text(original)


def _previous_aider(name: str, tasks: list[dict[str, str]], files: int) -> list[dict] | None:
    """aider runs of an earlier report on the same repo and tasks (--reuse-aider)."""
    try:
        reports = json.loads((OUT / "repomap.json").read_text())
    except (OSError, ValueError):
        return None
    for old in reports:
        if old.get("repo") == name and old.get("task_list") == tasks and old["files"] == files:
            runs: list[dict] | None = old.get("aider_runs")
            return runs
    return None


def bench_repo(
    name: str,
    n_tasks: int,
    aider_runs: int,
    aider_ok: bool,
    reuse: bool = False,
    warm_runs_wanted: int = 3,
    first_map: bool = True,
) -> dict:
    from bonsai.services.repomap.discovery import IgnoreRules, discover

    root = prepare_repo(name)
    files = [c.path for c in discover(IgnoreRules(root)).files]
    tasks = make_tasks(root, n_tasks)
    edit = EDIT_TARGET.get(name) or _edit_target(root, files)
    original = (root / edit).read_text()
    ours_cmd = [sys.executable, str(Path(__file__).resolve()), "--ours"]
    db = OUT / f"{name}-bonsai.db"
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    base = {"root": str(root), "db": str(db), "files": files, "tasks": tasks}
    report: dict = {"repo": name, "files": len(files), "tasks": len(tasks), "task_list": tasks}
    previous = _previous_aider(name, tasks, len(files)) if reuse else None
    report["ours_cold"] = _child(ours_cmd, {**base, "tokens": 1024, "first_map": first_map})
    warm_runs = []
    for i in range(warm_runs_wanted):
        budgets = list(BUDGETS) if i == 0 else []
        warm_runs.append(_child(ours_cmd, {**base, "touch": edit, "budgets": budgets}))
        _restore(root, edit, original)
    report["ours_warm"] = warm_runs[0]
    report["ours_warm_runs"] = warm_runs
    report["cli"] = cli_times(root)
    if previous:
        report["aider_runs"] = previous
    elif aider_ok:
        aider_cmd = [str(AIDER_PY), str(DRIVER)]
        runs = []
        for i in range(aider_runs):
            job = {**base, "budgets": list(BUDGETS), "touch": edit if i == 0 else None}
            runs.append(_child(aider_cmd, job, seed=str(i + 1)))
            _restore(root, edit, original)
        report["aider_runs"] = runs
    shutil.rmtree(root / ".aider.tags.cache.v4", ignore_errors=True)
    return report


def _edit_target(root: Path, files: list[str]) -> str:
    """A library Python file of median size with definitions: the file to edit."""
    sized = sorted(
        ((root / f).stat().st_size, f)
        for f in files
        if f.endswith(".py")
        and "test" not in f
        and "def " in (root / f).read_text("utf-8", "replace")
    )
    return sized[len(sized) // 2][1]


def _recall(hits: list[bool]) -> float:
    return sum(hits) / len(hits) if hits else 0.0


def print_report(r: dict) -> None:
    cold, warm = r["ours_cold"], r["ours_warm"]
    print(f"\n== {r['repo']}: {r['files']} files, {r['tasks']} tasks (chars/4 tokens)")
    aider = r.get("aider_runs") or []
    a0 = aider[0] if aider else {}

    def row(label: str, ours: float, theirs: float | None, unit: str = "s") -> None:
        if theirs is None:
            print(f"{label:<34}{ours:>10.3f}{unit}")
        else:
            ratio = theirs / ours if ours else float("inf")
            print(
                f"{label:<34}{ours:>10.3f}{unit}{theirs:>12.3f}{unit}  aider/bonsai {ratio:5.1f}x"
            )

    print(f"{'metric':<34}{'bonsai':>11}{'aider':>13}")
    row("cold build -> first map", cold["build_s"], a0.get("build_s"))
    if "first_map_s" in cold:
        print(
            f"{'  (early map, important files)':<34}{cold['first_map_s']:>10.3f}s"
            f"  {cold['first_map_files']} files shown,"
            f" {cold['first_map_s'] / cold['parse_only_s']:.2f}x parse-only wall"
        )
    row("warm build -> first map", warm["build_s"], aider[1]["build_s"] if len(aider) > 1 else None)
    print(f"{'  (warm build() alone)':<34}{warm['build_only_s']:>10.3f}s")
    if "first_mention_s" in warm:
        print(f"{'  (+ first map with task words)':<34}{warm['first_mention_s']:>10.3f}s")
    print(f"{'  (warm, CPU time)':<34}{warm['build_cpu_s']:>10.3f}s  graph {warm['graph']}")
    row("first edit -> new map", warm["incremental_first_s"], a0.get("incremental_s"))
    row("edit adding a function -> new map", warm["incremental_s"], a0.get("incremental_s"))
    print(f"{'  (CPU time)':<34}{warm['incremental_cpu_s']:>10.3f}s")
    row("edit, same definitions -> new map", warm["incremental_body_s"], a0.get("incremental_s"))
    print(f"{'  (CPU time)':<34}{warm['incremental_body_cpu_s']:>10.3f}s")
    parse_s, parse_cpu = cold["parse_only_s"], cold["parse_only_cpu_s"]
    print(f"{'plain tree-sitter parse, 1 thread':<34}{parse_s:>10.3f}s  CPU {parse_cpu:.3f}s")
    print(
        f"{'  cold / parse-only':<34}{cold['build_s'] / parse_s:>10.2f}x wall"
        f"   {cold['build_tree_cpu_s'] / parse_cpu:.2f}x CPU (process tree)"
    )
    print(f"{'  warm / parse-only':<34}{warm['build_s'] / warm['parse_only_s']:>10.2f}x wall")
    one = warm["parse_edited_cpu_s"]
    print(
        f"{'  edit CPU / parse of that file':<34}{warm['incremental_cpu_s'] / one:>10.2f}x"
        f"   (same definitions {warm['incremental_body_cpu_s'] / one:.2f}x; file {one * 1000:.1f} ms)"
    )
    runs = r.get("ours_warm_runs") or [warm]
    for key, label in (
        ("build_s", "warm -> first map"),
        ("incremental_body_s", "edit, same definitions"),
        ("incremental_s", "edit adding a function"),
    ):
        values = sorted(run[key] for run in runs)
        print(f"  {label} over {len(runs)} processes: min {values[0]:.3f}s max {values[-1]:.3f}s")
    peak = max(cold["peak_rss_mb"], *(run["peak_rss_mb"] for run in runs))
    row("peak RSS main process", peak, a0.get("peak_rss_mb"), "MB")
    print(f"{'  peak RSS of a parse worker':<34}{cold['peak_worker_mb']:>10.1f}MB")
    print(
        f"{'  process tree, cold build':<34}{cold['peak_tree_mb']:>10.1f}MB"
        "  sampled: all processes summed at the same moment"
    )
    for name, t in (r.get("cli") or {}).items():
        label = f"  bonsai {name} (warm cache)" if name == "repomap" else f"  bonsai {name}"
        print(f"{label:<34}{t['wall_s']:>10.3f}s  CPU {t['cpu_s']:.3f}s  (process start to exit)")
    for tokens in BUDGETS:
        ours = _recall(warm["hits"][str(tokens)])
        theirs = [_recall(run["hits"][str(tokens)]) for run in aider]
        spread = f"{min(theirs):.2f}..{max(theirs):.2f}" if theirs else "n/a"
        ratio = f"{ours / max(theirs):.1f}x" if theirs and max(theirs) > 0 else "inf"
        print(
            f"recall @ {tokens:<5} tokens          {ours:>10.2f} {spread:>12}  bonsai/aider {ratio}"
        )


def print_summary(reports: list[dict]) -> None:
    """One line per repository: the timing and memory aims side by side."""
    print(
        "\n| repository | files | parse-only wall / CPU | cold → map (× parse wall, × CPU) "
        "| cold → early first map (× parse wall) | warm → map | edit keeping names / adding a function (CPU) | tree peak | "
        "CLI repomap warm |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in reports:
        cold, warm = r["ours_cold"], r["ours_warm"]
        runs = r.get("ours_warm_runs") or [warm]
        body = sorted(run["incremental_body_cpu_s"] for run in runs)[len(runs) // 2]
        added = sorted(run["incremental_cpu_s"] for run in runs)[len(runs) // 2]
        cli = (r.get("cli") or {}).get("repomap", {})
        print(
            f"| {r['repo']} | {r['files']:,} | {cold['parse_only_s']:.2f} s / "
            f"{cold['parse_only_cpu_s']:.2f} s | {cold['build_s']:.2f} s "
            f"({cold['build_s'] / cold['parse_only_s']:.2f}×, "
            f"{cold['build_tree_cpu_s'] / cold['parse_only_cpu_s']:.2f}×) | "
            f"{_early(cold)} | {warm['build_s']:.3f} s | {body * 1000:.0f} / {added * 1000:.0f} ms | "
            f"{cold['peak_tree_mb']:.0f} MB | {cli.get('wall_s', 0):.2f} s "
            f"(CPU {cli.get('cpu_s', 0):.2f} s) |"
        )


def _early(cold: dict) -> str:
    if "first_map_s" not in cold:
        return "none"
    return f"{cold['first_map_s']:.2f} s ({cold['first_map_s'] / cold['parse_only_s']:.2f}×)"


def _swe_text(project: str) -> str:
    """The issue text of the SWE-bench instance of ``project`` (its first map's
    task), or "" without the trajectories."""
    try:
        found = [i for i in swe_instances() if SWE_REPOS[i["instance"]][0] == project]
    except OSError:
        return ""
    return str(found[0]["text"]) if found else ""


RECALL_REPORT = OUT / "repomap-recall.json"


def _recall_reports() -> dict[str, dict]:
    try:
        return {r["repo"]: r for r in json.loads(RECALL_REPORT.read_text())}
    except (OSError, ValueError):
        return {}


def recall_repo(
    name: str, families: list[str], n_tasks: int, aider_runs: int, aider_ok: bool, reuse: bool
) -> dict:
    """Localization only: one bonsai process and ``aider_runs`` aider processes
    (with ``reuse``, aider's runs of the saved report when its tasks are the same)."""
    from bonsai.services.repomap.discovery import IgnoreRules, discover

    root = prepare_repo(name)
    files = [c.path for c in discover(IgnoreRules(root)).files]
    tasks = family_tasks(name, root, files, families, n_tasks)
    db = OUT / f"{name}-recall.db"
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    job = {"root": str(root), "db": str(db), "files": files, "tasks": tasks}
    job["budgets"] = list(BUDGETS)
    ours_cmd = [sys.executable, str(Path(__file__).resolve()), "--ours"]
    report: dict = {"repo": name, "files": len(files), "task_list": tasks}
    report["ours"] = _child(ours_cmd, job)
    old = _recall_reports().get(name) if reuse else None
    runs = old["aider_runs"] if old and old["task_list"] == tasks else []
    if aider_ok and not runs:
        for i in range(aider_runs):
            runs.append(_child([str(AIDER_PY), str(DRIVER)], job, seed=str(i + 1)))
    report["aider_runs"] = runs
    shutil.rmtree(root / ".aider.tags.cache.v4", ignore_errors=True)
    return report


def _family_recall(hits: list[bool], tasks: list[dict], family: str) -> float:
    return _recall([h for h, t in zip(hits, tasks, strict=True) if t["family"] == family])


def print_recall(r: dict) -> None:
    tasks = r["task_list"]
    print(f"\n== {r['repo']}: {r['files']} files (chars/4 tokens)")
    for family in sorted({t["family"] for t in tasks}):
        n = sum(t["family"] == family for t in tasks)
        for tokens in BUDGETS:
            key = str(tokens)
            ours = _family_recall(r["ours"]["hits"][key], tasks, family)
            theirs = [_family_recall(run["hits"][key], tasks, family) for run in r["aider_runs"]]
            spread = f"{min(theirs):.2f}..{max(theirs):.2f}" if theirs else "n/a"
            print(f"{family:<12} {n:>3} tasks @ {tokens:<5} bonsai {ours:.2f}  aider {spread}")
        key = str(BUDGETS[-1])
        places = [
            p for p, t in zip(r["ours"]["places"][key], tasks, strict=True) if t["family"] == family
        ]
        top = [sum(p is not None and p < k for p in places) / max(1, n) for k in (1, 5, 10)]
        print(
            f"{family:<12} gold file in the map's first 1 / 5 / 10 files: {top[0]:.2f} / {top[1]:.2f} / {top[2]:.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repos", default="stdlib,pydantic")
    parser.add_argument("--tasks", type=int, default=24)
    parser.add_argument("--aider-runs", type=int, default=2)
    parser.add_argument("--no-aider", action="store_true")
    parser.add_argument(
        "--warm-runs", type=int, default=3, help="warm-start processes (the spread is printed)"
    )
    parser.add_argument(
        "--reuse-aider", action="store_true", help="reuse aider figures of the last report"
    )
    parser.add_argument(
        "--recall-only", action="store_true", help="measure localization only, per family"
    )
    parser.add_argument("--families", default="named,prose,swe")
    parser.add_argument(
        "--corpus",
        action="store_true",
        help="localization on the mini-swe-agent corpus issues (bench/repomap_localise.py)",
    )
    parser.add_argument("--corpus-repos", help="only these corpus repositories (comma-separated)")
    parser.add_argument(
        "--early",
        action="store_true",
        help="corpus: also score the early first map a cold build hands over (first_map.py)",
    )
    parser.add_argument(
        "--params", default="{}", help='ablation: JSON {"ranking.LEXICAL_WEIGHT": 0, ...}'
    )
    parser.add_argument(
        "--grid", default="[]", help='corpus: fusion variants [{"RRF_K": 10}, ...] (fusion.py)'
    )
    parser.add_argument(
        "--no-first-map", action="store_true", help="cold build without the early first map"
    )
    parser.add_argument(
        "--timeline",
        action="store_true",
        help="then one more cold build per repository, its timeline (bench/repomap_timeline.py)",
    )
    parser.add_argument(
        "--cold",
        action="store_true",
        help="corpus: cold builds of every release, one fresh process each (bench/repomap_cold.py)",
    )
    parser.add_argument("--cold-runs", type=int, default=1, help="cold builds per release")
    parser.add_argument("--ours", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.ours:  # a job as JSON, or @FILE holding it (a long file list)
        ours = Path(args.ours[1:]).read_text() if args.ours.startswith("@") else args.ours
        print(json.dumps(run_ours(json.loads(ours))))
        return
    OUT.mkdir(parents=True, exist_ok=True)
    if args.corpus and args.cold:  # bonsai alone: no aider needed
        wanted = set(args.corpus_repos.split(",")) if args.corpus_repos else None
        releases = corpus_releases(wanted)
        for name, version in SDISTS.items():  # the SWE-bench repositories known here
            if f"{name.lower()}-{version}" not in releases and (not wanted or name in wanted):
                releases[f"{name.lower()}-{version}"] = {"root": str(prepare_repo(name))}
                releases[f"{name.lower()}-{version}"]["task"] = _swe_text(name)
        ours_cmd = [sys.executable, str(Path(__file__).resolve()), "--ours"]
        log = lambda m: print(m, flush=True)  # noqa: E731
        results = cold_builds(releases, ours_cmd, log, args.cold_runs)
        save(results, OUT / "repomap-cold.json")
        print_cold(results)
        return
    problem = "skipped (--no-aider)" if args.no_aider else ensure_aider()
    if problem:
        print("aider:", problem)
    if args.corpus:
        wanted = set(args.corpus_repos.split(",")) if args.corpus_repos else None
        child = [sys.executable, str(HERE / "repomap_localise.py")]
        aider_py = None if problem else AIDER_PY
        params = json.loads(args.params)
        grid = json.loads(args.grid)
        result = localise(
            wanted, aider_py, child, lambda m: print(m, flush=True), params, grid, args.early
        )
        (OUT / "repomap-localise.json").write_text(json.dumps(result, indent=1))
        print_localise(result)
        print_lanes(result, grid)
        print_early(result)
        return
    if args.recall_only:
        families = args.families.split(",")
        recall = [
            recall_repo(
                name, families, args.tasks, args.aider_runs, problem is None, args.reuse_aider
            )
            for name in args.repos.split(",")
        ]
        saved = _recall_reports() | {r["repo"]: r for r in recall}
        RECALL_REPORT.write_text(json.dumps(list(saved.values()), indent=2))
        for report in recall:
            print_recall(report)
        return
    reports = [
        bench_repo(
            name,
            args.tasks,
            args.aider_runs,
            problem is None,
            args.reuse_aider,
            args.warm_runs,
            not args.no_first_map,
        )
        for name in args.repos.split(",")
    ]
    (OUT / "repomap.json").write_text(json.dumps(reports, indent=2))
    for report in reports:
        print_report(report)
    print_summary(reports)
    if args.timeline:  # where the two cores wait, in a build of its own (instrumented)
        for report in reports:
            task = report["task_list"][0]["text"] if report["task_list"] else ""
            cmd = [sys.executable, str(HERE / "repomap_timeline.py"), str(REPOS / report["repo"])]
            subprocess.run([*cmd, "--task", task], check=True)


if __name__ == "__main__":
    main()
