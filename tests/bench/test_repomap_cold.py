"""The cold-timing mode of the corpus bench (``bench/repomap.py --corpus --cold``)
on a small generated repository: every build is a fresh process on an empty
cache (every source file parsed, nothing shared, even on the second run over
the same scratch folder), the early first map comes before the complete one,
the process tree is sampled from outside, a plain parse of the same files is
timed in the same process, and the table prints the release and the median."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from repomap_cold import cold_builds, print_cold

BENCH = Path(__file__).resolve().parents[2] / "bench"
MODULES = 230  # over first_map.FIRST_MIN_FILES (200) ...
PAD = "Renders the widget on every frame.\n" * 560  # ... and indexer.PARALLEL_MIN_BYTES


def write_repo(root: Path) -> Path:
    pkg = root / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    for k in range(MODULES):
        calls = "\n".join(f"    return helper_{j:03d}(x)" for j in (k - 1,) if j >= 0)
        (pkg / f"mod_{k:03d}.py").write_text(
            f'"""{PAD}"""\n\nfrom pkg.mod_{max(k - 1, 0):03d} import *\n\n\n'
            f"def helper_{k:03d}(x):\n{calls or '    return x'}\n\n\n"
            f"class Widget{k:03d}:\n    def render_{k:03d}(self):\n        return {k}\n"
        )
    return root


@pytest.mark.timeout(300)
def test_cold_mode_builds_every_run_from_nothing_and_reports_the_ratios(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_repo(tmp_path / "repo")
    ours = [sys.executable, str(BENCH / "repomap.py"), "--ours"]
    releases = {"generated-1.0": {"root": str(root), "task": "Widget117.render_117 is wrong"}}
    scratch = tmp_path / "scratch"
    results = cold_builds(releases, ours, lambda _m: None, runs=2, scratch=scratch)

    runs = results["generated-1.0"]
    assert len(runs) == 2
    sources = MODULES + 1
    for r in runs:  # the second run is as cold as the first: its cache was made for it
        assert r["files"] == sources
        assert r["parsed"] == sources and r["shared"] == 0 and r["trusted"] == 0
        assert 0 < r["first_map_s"] < r["build_s"]  # the early map, then the complete one
        assert r["first_map_files"] > 0
        assert 0 < r["first_map_cpu_s"] < r["build_cpu_s"]  # this process's CPU by then
        assert r["parse_only_s"] > 0 and r["parse_only_cpu_s"] > 0
        assert r["peak_tree_mb"] > 20  # a Python process with the service loaded
        # the tree's CPU holds at least the building process's own
        assert r["build_tree_cpu_s"] >= r["build_cpu_s"] - 0.05
        if (os.cpu_count() or 1) >= 2:  # a parse worker ran: its CPU and memory count
            assert r["peak_worker_mb"] > 5
            assert r["build_tree_cpu_s"] > r["build_cpu_s"]
    assert list(scratch.iterdir()) == []  # each build's cache is gone with it

    rows = print_cold(results)
    out = capsys.readouterr().out
    row = rows["generated-1.0"]
    assert row["runs"] == 2 and row["files"] == sources
    # each run over its own process's parse, then the median (here: the mean of two)
    assert row["complete_x"] == pytest.approx(
        sum(r["build_s"] / r["parse_only_s"] for r in runs) / 2
    )
    assert 0 < row["early_idle_s"] < row["idle_s"]
    # two idle cores: the busier of the two processes, between half the tree and all of it
    assert row["tree_cpu_s"] / 2 <= row["idle_s"] <= row["tree_cpu_s"]
    assert "| generated-1.0 | 231 (231) |" in out
    assert "| median of 1 |" in out
    assert "complete map median ≤ 2.0 s" in out
