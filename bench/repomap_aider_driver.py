"""Drive aider's RepoMap for bench/repomap.py. Runs inside the separate aider
virtualenv (never imported by bonsai). Reads one JSON job from argv[1], prints
one JSON result line."""

from __future__ import annotations

import json
import os
import re
import resource
import sys
import time
from pathlib import Path


class _IO:
    def read_text(self, fname):
        try:
            return Path(fname).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    def tool_output(self, *args, **kwargs):
        pass

    tool_warning = tool_error = tool_output


class _Model:
    """Same token estimate as bonsai's side of the benchmark: chars/4."""

    def token_count(self, text):
        return (len(text) + 3) // 4


def _repo_map(root: str):
    from aider.repomap import RepoMap

    return RepoMap(map_tokens=1024, root=root, main_model=_Model(), io=_IO(), verbose=False)


def _mentions(text: str, rel_files: list[str]) -> tuple[set[str], set[str]]:
    """aider's coder heuristics: every word is a candidate identifier; a word
    naming a file (path or unique basename) is a mentioned file."""
    idents = set(re.split(r"\W+", text))
    words = {w.strip(",.!;:?`'\"()") for w in text.split()}
    by_base: dict[str, list[str]] = {}
    for rel in rel_files:
        by_base.setdefault(os.path.basename(rel), []).append(rel)
    fnames = {w for w in words if w in set(rel_files)}
    fnames |= {by_base[w][0] for w in words if len(by_base.get(w, [])) == 1}
    return fnames, idents


def _render(rm, files, tokens, text, rel_files):
    fnames, idents = _mentions(text, rel_files)
    return rm.get_ranked_tags_map_uncached([], files, tokens, fnames, idents) or ""


def main() -> None:
    arg = sys.argv[1]  # the job as JSON, or @file holding it
    job = json.loads(Path(arg[1:]).read_text() if arg.startswith("@") else arg)
    root = job["root"]
    rel_files = job["files"]
    files = [os.path.join(root, f) for f in rel_files]
    out: dict = {}
    t0 = time.perf_counter()
    rm = _repo_map(root)
    text = _render(rm, files, job.get("tokens", 1024), "", rel_files)
    out["build_s"] = time.perf_counter() - t0
    out["chars"] = len(text)
    if job.get("touch"):
        target = Path(root) / job["touch"]
        target.write_text(target.read_text() + "\n\ndef bench_added_function():\n    pass\n")
        t1 = time.perf_counter()
        _render(rm, files, job.get("tokens", 1024), "", rel_files)
        out["incremental_s"] = time.perf_counter() - t1
    if job.get("orders"):  # per task and budget: hit, place of the first answer file
        known = set(rel_files)
        out["outcomes"] = [
            {
                str(tokens): _outcome(
                    _order(_render(rm, files, tokens, task["text"], rel_files), known),
                    task["targets"],
                )
                for tokens in job["budgets"]
            }
            for task in job["tasks"]
        ]
        print(json.dumps(out))
        return
    recalls = {}
    for tokens in job.get("budgets", []):
        hits = []
        for task in job["tasks"]:
            text = _render(rm, files, tokens, task["text"], rel_files)
            hits.append(_shown(text, task.get("targets") or [task["target"]]))
        recalls[str(tokens)] = hits
    out["hits"] = recalls
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))


def _order(text: str, known: set[str]) -> list[str]:
    """The files the map text lists, in the order it lists them."""
    seen: dict[str, None] = {}
    for line in text.splitlines():
        name = line.rstrip(":")
        if name in known:
            seen.setdefault(name, None)
    return list(seen)


def _outcome(order: list[str], targets: list[str]) -> dict:
    found = [order.index(t) for t in targets if t in order]
    return {
        "hit": all(t in order for t in targets),
        "place": min(found) if found else None,
        "files": len(order),
        "tokens": None,
    }


def _shown(text: str, targets: list[str]) -> bool:
    shown = {line.rstrip(":") for line in text.splitlines()}
    return all(rel in shown for rel in targets)


if __name__ == "__main__":
    main()
