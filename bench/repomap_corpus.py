"""Localization tasks from the mini-swe-agent corpus (../shared/corpus/mini-swe-agent-gemini).

Each trajectory is one SWE-bench Verified instance: its first user message holds
the issue (``<pr_description>``), ``info.submission`` the diff the agent
submitted. The corpus does not say which runs resolved their instance (74.2 %
of the run did), so the answer is a proxy: the files of the submitted patch
that are library code (tests and files the agent created are dropped); an
instance whose patch keeps no such file is skipped. A file changed by exactly
the same lines in two or more instances of one repository is dropped too: that
is the evaluation harness's environment setup (sphinx's runs all pin the same
dependencies in ``setup.py`` and ``tox.ini``), not a fix — two different issues
are not fixed by the same change.

The repository is the PyPI sdist of a release whose code is still unfixed: the
candidates of ``RELEASES`` are tried newest first and the first one on which
the submission's library part applies (``patch --dry-run``) is taken. sdists
are downloaded with pip (``--no-deps --no-binary PROJECT``: the project as its
source release; pip may fetch wheels of its build requirements to read its
metadata, with older build tools for old releases: ``_build_constraints``) into the benchmark
cache (``$BONSAI_BENCH_CACHE``, default ``~/.cache/bonsai-bench``), outside the
repository, and unpacked there once.

Held-out split: instances are sorted by id and alternate between ``tune`` and
``held-out`` within each repository, so both halves cover every repository.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from repomap_tasks import unpack_sdist

HERE = Path(__file__).resolve().parent
CACHE = Path(os.environ.get("BONSAI_BENCH_CACHE") or Path.home() / ".cache" / "bonsai-bench")


def _corpus_dir() -> Path:
    env = os.environ.get("BONSAI_SWE_CORPUS")
    if env:
        return Path(env)
    for base in (HERE.parent.parent, HERE.parent.parent.parent):  # main checkout or a worktree
        candidate = base / "shared" / "corpus" / "mini-swe-agent-gemini"
        if candidate.is_dir():
            return candidate
    return HERE.parent.parent / "shared" / "corpus" / "mini-swe-agent-gemini"


CORPUS = _corpus_dir()

# instance prefix -> (PyPI project, candidate releases, newest first). Feature
# releases (x.y.0) are closest to the development branch an instance was based on.
RELEASES: dict[str, tuple[str, tuple[str, ...]]] = {
    "astropy__astropy": ("astropy", ("5.1", "4.3", "4.2", "3.1", "3.0")),
    "django__django": ("Django", ("4.2", "4.1", "4.0", "3.2", "3.1", "3.0", "2.2", "2.1")),
    "matplotlib__matplotlib": ("matplotlib", ("3.7.0", "3.6.0", "3.4.0", "3.1.0")),
    "psf__requests": ("requests", ("2.4.0", "2.0.0")),
    "pydata__xarray": ("xarray", ("2022.12.0", "0.17.0", "0.16.0", "0.12.3")),
    "pylint-dev__pylint": ("pylint", ("2.14.0", "2.13.0", "2.12.0", "2.8.0", "2.7.0")),
    "pytest-dev__pytest": ("pytest", ("6.2.5", "6.0.0", "5.4.0", "5.3.0", "5.1.0", "5.0.0")),
    "scikit-learn__scikit-learn": ("scikit-learn", ("1.3.0", "1.2.0", "0.22", "0.21.0", "0.20.0")),
    "sphinx-doc__sphinx": ("Sphinx", ("5.0.0", "4.4.0", "4.1.0", "3.4.0", "3.2.0", "3.0.0")),
    "sympy__sympy": ("sympy", ("1.12", "1.10", "1.8", "1.6", "1.4", "1.1")),
}

_PR = re.compile(
    r"<pr_description>\s*(?:Consider the following PR description:\s*)?(.*?)</pr_description>", re.S
)
_DIFF_FILE = re.compile(r"^diff --git a/(\S+) b/", re.M)
_TESTISH = frozenset({"test", "tests", "testing", "unittests"})


def is_test_path(path: str) -> bool:
    parts = path.split("/")
    name = parts[-1]
    return (
        any(p in _TESTISH for p in parts[:-1])
        or name.startswith("test_")
        or name.endswith("_test.py")
        or name in ("conftest.py", "tests.py")
    )


def _split_diff(diff: str) -> dict[str, str]:
    """path -> that file's part of a ``diff --git`` patch."""
    out: dict[str, str] = {}
    starts = [m.start() for m in _DIFF_FILE.finditer(diff)] + [len(diff)]
    for lo, hi in itertools.pairwise(starts):
        chunk = diff[lo:hi]
        match = _DIFF_FILE.match(chunk)
        if match:
            out[match.group(1)] = chunk
    return out


def _issue(messages: list[dict]) -> str | None:
    for message in messages:
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, str):
            found = _PR.search(content)
            if found:
                return found.group(1).strip()
    return None


def _change(chunk: str) -> str:
    """The changed lines of one file's diff (context and line numbers left out)."""
    lines = chunk.splitlines()
    return "\n".join(x for x in lines if x[:1] in "+-" and not x.startswith(("+++", "---")))


def corpus_instances(folder: Path = CORPUS) -> list[dict]:
    """One entry per trajectory: instance id, repository key, issue text, and the
    library part of the submitted diff by file (targets are settled per release;
    a change repeated verbatim across instances is setup, see the module doc)."""
    found: list[dict] = []
    for path in sorted(folder.glob("*.traj.json")):
        traj = json.loads(path.read_text())
        instance = traj.get("instance_id") or path.name.split(".")[0]
        repo = instance.rsplit("-", 1)[0]
        text = _issue(traj.get("messages") or [])
        submission = (traj.get("info") or {}).get("submission") or ""
        parts = {p: d for p, d in _split_diff(submission).items() if not is_test_path(p)}
        if repo in RELEASES and text and parts:
            found.append({"instance": instance, "repo": repo, "text": text, "diffs": parts})
    seen: dict[tuple[str, str, str], int] = {}
    for inst in found:
        for p, d in inst["diffs"].items():
            key = (inst["repo"], p, _change(d))
            seen[key] = seen.get(key, 0) + 1
    out: list[dict] = []
    for inst in found:
        kept = {p: d for p, d in inst["diffs"].items() if seen[(inst["repo"], p, _change(d))] < 2}
        if kept:
            out.append({**inst, "diffs": kept, "setup": sorted(set(inst["diffs"]) - set(kept))})
    return out


def split_of(instances: list[dict]) -> dict[str, str]:
    """instance -> "tune" or "held-out", alternating by id within each repository."""
    out: dict[str, str] = {}
    by_repo: dict[str, list[str]] = {}
    for inst in instances:
        by_repo.setdefault(inst["repo"], []).append(inst["instance"])
    for ids in by_repo.values():
        for i, instance in enumerate(sorted(ids, key=_numeric)):
            out[instance] = "tune" if i % 2 == 0 else "held-out"
    return out


def _numeric(instance: str) -> tuple[str, int]:
    head, _, number = instance.rpartition("-")
    return head, int(number) if number.isdigit() else 0


# -- releases -----------------------------------------------------------------------


def release_dir(project: str, version: str) -> Path | None:
    """The unpacked sdist of ``project==version`` (downloaded and unpacked once);
    None when pip cannot fetch it (an old ``setup.py`` may not even run on this
    Python, and pip runs it to read the metadata)."""
    dest = CACHE / "repos" / f"{project.lower()}-{version}"
    if dest.exists():
        return dest
    download = CACHE / "sdists" / f"{project.lower()}-{version}"
    failed = download.with_name(download.name + ".failed")
    if failed.exists():
        return None
    if not download.exists() or not any(download.iterdir()):
        download.mkdir(parents=True, exist_ok=True)
        pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", project]
        pip += ["--build-constraint", str(_build_constraints())]
        proc = subprocess.run(
            [*pip, "-q", "-d", str(download), f"{project}=={version}"],
            capture_output=True,
            text=True,
            timeout=900,
        )
        if proc.returncode != 0 or not any(download.iterdir()):
            failed.write_text(proc.stderr[-2000:])
            print(f"  {project}=={version}: no sdist ({failed})", file=sys.stderr)
            return None
    (archive,) = sorted(download.iterdir())
    return unpack_sdist(archive, dest)


BUILD_CONSTRAINTS = "setuptools<70\nCython<3\nmarkupsafe<2.1\n"


def _build_constraints() -> Path:
    """pip builds an sdist's metadata with the newest build tools, which old
    releases' ``setup.py`` no longer runs with: astropy up to 5.1 imports
    ``setuptools.dep_util`` (removed in setuptools 70) and, in 4.x, a Jinja2
    that needs markupsafe's ``soft_unicode`` (gone in 2.1); scikit-learn up to
    1.2 cythonizes its sources and fails under Cython 3. The build environment
    gets older ones (``pip download --build-constraint``)."""
    path = CACHE / "build-constraints.txt"
    if not path.exists() or path.read_text() != BUILD_CONSTRAINTS:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(BUILD_CONSTRAINTS)
    return path


def applies(root: Path, diff: str) -> bool:
    """``diff`` applies to the tree at ``root`` (its code is not fixed yet)."""
    proc = subprocess.run(
        ["patch", "-p1", "--dry-run", "--batch", "--silent", "-F", "2", "-d", str(root)],
        input=diff,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return proc.returncode == 0


def resolve(instance: dict) -> dict | None:
    """The instance with its release (``project``, ``version``, ``root``) and its
    ``targets`` (library files of the patch present in it), or None."""
    project, versions = RELEASES[instance["repo"]]
    diff = "".join(instance["diffs"].values())  # without the setup changes
    for version in versions:
        root = release_dir(project, version)
        if root is None:
            continue
        targets = sorted(p for p in instance["diffs"] if (root / p).is_file())
        if targets and applies(root, diff):
            return {
                **instance,
                "project": project,
                "version": version,
                "root": str(root),
                "targets": targets,
            }
    return None


def resolved_instances(folder: Path = CORPUS, only: set[str] | None = None) -> list[dict]:
    """Every corpus instance with its release, remembered in the cache (the patch
    checks and downloads run once)."""
    memo_path = CACHE / "corpus-releases.json"
    try:
        memo: dict[str, dict] = json.loads(memo_path.read_text())
    except (OSError, ValueError):
        memo = {}
    out: list[dict] = []
    for inst in corpus_instances(folder):
        if only and inst["repo"] not in only:
            continue
        key = inst["instance"]
        tried = list(RELEASES[inst["repo"]][1])
        known = memo.get(key)
        if known is None or (known.get("targets") is None and known.get("tried") != tried):
            found = resolve(inst)
            memo[key] = (
                {"tried": tried}
                if found is None
                else {k: found[k] for k in ("project", "version", "root", "targets")}
            )
            memo_path.parent.mkdir(parents=True, exist_ok=True)
            memo_path.write_text(json.dumps(memo, indent=1, sort_keys=True))
        targets = [t for t in memo[key].get("targets") or () if t in inst["diffs"]]
        if targets:  # (a memo from before setup changes were dropped may list them)
            out.append({**inst, **memo[key], "targets": targets})
    return out


if __name__ == "__main__":  # resolve (and download) everything once: repomap_corpus.py [repo,...]
    wanted = set(sys.argv[1].split(",")) if len(sys.argv) > 1 else None
    found = resolved_instances(only=wanted)
    by: dict[str, list[str]] = {}
    for inst in found:
        by.setdefault(f"{inst['project']}-{inst['version']}", []).append(inst["instance"])
    for release, ids in sorted(by.items()):
        print(f"{release}: {len(ids)}")
    print(f"{len(found)} of {len(corpus_instances())} instances resolved")
