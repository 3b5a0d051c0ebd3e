"""Localization tasks for bench/repomap.py beyond the identifier-naming family.

* ``swe``: real SWE-bench instances recorded by SWE-agent under
  ../shared/trajectories/swe-agent (read in place, never copied): the issue text
  the agent was given is the mention text, the files of the submitted patch are
  the answer. Each instance's repository is the PyPI sdist of the release whose
  code matches the instance's base commit (``SWE_REPOS``), fetched with pip into
  bench/out at benchmark time.
* ``swe-nolinks``: the same issue texts with their URLs removed: the two
  instances link to the very file to change, which real issues often do not.
* ``prose``: behaviour-only tasks generated deterministically from docstrings:
  the first sentence of a library definition's docstring, with every code-like
  word, the definition's name and the file's name removed, in an issue-like
  frame. A task is a hit when the definition's file is in the map.
"""

from __future__ import annotations

import ast
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _trajectories_dir() -> Path:
    """``$BONSAI_SWE_TRAJECTORIES``, else ``shared/trajectories/swe-agent`` beside
    the main checkout or beside a worktree's folder."""
    env = os.environ.get("BONSAI_SWE_TRAJECTORIES")
    if env:
        return Path(env)
    for base in (HERE.parent.parent, HERE.parent.parent.parent):
        candidate = base / "shared" / "trajectories" / "swe-agent"
        if candidate.is_dir():
            return candidate
    return HERE.parent.parent / "shared" / "trajectories" / "swe-agent"


TRAJECTORIES = _trajectories_dir()

# instance -> (PyPI project, version matching the base commit, trajectory files)
SWE_REPOS: dict[str, tuple[str, str]] = {
    # fields.py has the unfixed TimeDelta._serialize at line 1474, as the issue links
    "marshmallow-code__marshmallow-1867": ("marshmallow", "3.13.0"),
    # numpy_handler.py still lists PixelRepresentation as required (fixed in 2.2.0)
    "pydicom__pydicom-1458": ("pydicom", "2.1.2"),
}
PROSE_FRAMES = (
    "Something is broken here: {s}",
    "Wrong behaviour in the code that is meant to do this: {s}",
    "Users report a bug. Expected: {s}",
    "This no longer works as documented: {s}",
)
_ISSUE = re.compile(r"ISSUE:\n(.*?)\n+INSTRUCTIONS:", re.S)
_DIFF_FILE = re.compile(r"^diff --git a/(\S+) b/", re.M)
_URL = re.compile(r"https?://\S+")
_CODEISH = re.compile(r"[_.()\[\]{}<>=`'\"/\\:*#@$]|[a-z][A-Z]|\d")
_WORD = re.compile(r"\S+")
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


# -- repositories from PyPI ------------------------------------------------------


def fetch_sdist(project: str, version: str, dest: Path, cache: Path) -> Path:
    """The unpacked sdist of ``project==version`` at ``dest`` (downloaded once)."""
    if dest.exists():
        return dest
    cache.mkdir(parents=True, exist_ok=True)
    archive = cache / f"{project}-{version}.tar.gz"
    if not archive.exists():
        pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:"]
        subprocess.run(
            [*pip, "-d", str(cache), "-q", f"{project}=={version}"],
            check=True,
            timeout=600,
        )
    return unpack_sdist(archive, dest)


def unpack_sdist(archive: Path, dest: Path) -> Path:
    """The sdist ``archive`` (a .tar.gz or .zip) unpacked at ``dest``: extracted
    beside it first, so an interrupted run never leaves a half tree at ``dest``."""
    staging = dest.with_name(dest.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(staging)
    else:
        with tarfile.open(archive) as tar:
            tar.extractall(staging, filter="data")
    (top,) = staging.iterdir()  # sdists unpack into project-version/
    top.rename(dest)
    staging.rmdir()
    return dest


# -- SWE-bench instances from SWE-agent trajectories ----------------------------------


def _issue_text(traj: dict) -> str:
    """The issue of the instance itself: the last user message carrying one
    (earlier ones can be demonstrations of another instance)."""
    texts = [
        _ISSUE.search(m["content"])
        for m in traj.get("history", [])
        if m.get("role") == "user" and isinstance(m.get("content"), str)
    ]
    found = [t.group(1).strip() for t in texts if t]
    if not found:
        raise ValueError("no issue text in trajectory")
    return found[-1]


def swe_instances(folder: Path = TRAJECTORIES) -> list[dict]:
    """One entry per instance (variants of one instance agree on the issue; the
    union of their patches' files is the answer)."""
    merged: dict[str, dict] = {}
    for path in sorted(folder.glob("*.traj")):
        instance = next((i for i in SWE_REPOS if i.split("__")[1] in path.name), None)
        if instance is None:
            continue
        traj = json.loads(path.read_text())
        patch = (traj.get("info") or {}).get("submission") or ""
        files = _DIFF_FILE.findall(patch)
        if not files:
            continue
        entry = merged.setdefault(
            instance, {"instance": instance, "text": _issue_text(traj), "targets": []}
        )
        entry["targets"] = sorted(set(entry["targets"]) | set(files))
    return [merged[k] for k in sorted(merged)]


def swe_tasks(instance: dict) -> list[dict]:
    text = instance["text"]
    no_links = re.sub(r"\[([^\]]*)\]\(\s*\S+?\)", r"\1", text)  # markdown links keep their words
    no_links = _URL.sub("", no_links)
    return [
        {"family": "swe", "text": text, "targets": instance["targets"]},
        {"family": "swe-nolinks", "text": no_links, "targets": instance["targets"]},
    ]


# -- behaviour-only tasks from docstrings -------------------------------------------------


def _library(path: str) -> bool:
    parts = path.split("/")
    tests = any(p in ("test", "tests", "testing", "idlelib", "docs", "examples") for p in parts)
    return path.endswith(".py") and not tests and not parts[-1].startswith("test")


def prose_sentence(doc: str, banned: set[str], classes: frozenset[str] = frozenset()) -> str | None:
    """The docstring's first sentence in plain words: code-like words, the
    banned ones (the definition's and file's names, any case) and the file's
    class names (as written) dropped; None when too little is left."""
    first = re.split(r"(?<=[.!?])\s|\n\s*\n", doc.strip(), maxsplit=1)[0]
    words = []
    for word in _WORD.findall(first):
        bare = word.strip(",.;:!?")
        if not bare or _CODEISH.search(bare) or bare.lower() in banned or bare in classes:
            continue
        words.append(word if bare == word.rstrip(",;") else bare)
    if len(words) < 6:
        return None
    sentence = " ".join(words).rstrip(",;:")
    return sentence[0].upper() + sentence[1:] + ("" if sentence.endswith(".") else ".")


def _split_name(name: str) -> set[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name).replace("_", " ")
    return {w.lower() for w in spaced.split()} | {name.lower()}


def make_prose_tasks(root: Path, files: list[str], count: int, seed: int = 11) -> list[dict]:
    """Deterministic: candidates sorted, then a seeded sample."""
    candidates: list[tuple[str, str]] = []
    for rel in sorted(f for f in files if _library(f)):
        try:
            tree = ast.parse((root / rel).read_text(encoding="utf-8", errors="replace"))
        except (SyntaxError, ValueError):
            continue
        stem_words = _split_name(Path(rel).stem) | _split_name(Path(rel).parent.name)
        defs = [n for n in ast.walk(tree) if isinstance(n, _DEFS)]
        classes = frozenset(n.name for n in defs if not n.name.islower())
        for node in defs:
            doc = ast.get_docstring(node)
            if not doc or node.name.startswith("_"):
                continue
            sentence = prose_sentence(doc, _split_name(node.name) | stem_words, classes)
            if sentence:
                candidates.append((rel, sentence))
    candidates = sorted(set(candidates))
    picked = random.Random(seed).sample(candidates, min(count, len(candidates)))
    return [
        {
            "family": "prose",
            "text": PROSE_FRAMES[i % len(PROSE_FRAMES)].format(s=s),
            "targets": [rel],
        }
        for i, (rel, s) in enumerate(picked)
    ]


def targets_of(task: dict) -> list[str]:
    targets: list[str] = task.get("targets") or [task["target"]]
    return targets
