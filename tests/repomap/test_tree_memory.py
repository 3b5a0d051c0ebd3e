"""A cold build of a 2,000-file repository keeps the whole process tree (the
building process and its parse workers, summed at the same moment) small: the
workers load only the tagging code and send their results back chunk by chunk."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bonsai.dev.tree_rss import TreeSampler, runs_module

FILES = 2000
# measured: ~95 MB for the tree, ~33 MB for a worker; a worker importing the service
# (numpy, pydantic: ~55 MB) or keeping every result it sent breaks these
TREE_BOUND_MB = 160
# each module ~2.5 KB: the tree's 5 MB of source is over indexer.PARALLEL_MIN_BYTES
DOC = '"""' + "Models of the example, handled in three parts each.\n" * 34 + '"""\n'
WORKER_BOUND_MB = 50

BUILD = """
import sys
from pathlib import Path
from bonsai.services.repomap import RepoMapService
from bonsai.settings import RepoMapSettings
service = RepoMapService(Path(sys.argv[1]), Path(sys.argv[2]), RepoMapSettings(workers=2),
                         lambda text: (len(text) + 3) // 4)
stats = service.build()
result = service.get(tokens=1024)
service.stop()
print(stats.parsed, len(result.files))
"""


def _write_repo(root: Path) -> None:
    for k in range(FILES):
        pkg = root / f"pkg{k // 100:02d}"
        pkg.mkdir(parents=True, exist_ok=True)
        base = (k * 7) % FILES
        lines = [DOC, f"from pkg{base // 100:02d}.mod_{base:04d} import Model{base:04d}\n"]
        for c in range(3):
            lines.append(f"\n\nclass Model{k:04d}Part{c}(Model{base:04d}):\n")
            for m in range(3):
                lines.append(f"    def handle_{m}_{k:04d}(self, value):\n")
                lines.append(f"        return helper_{(k + m) % FILES:04d}(value, len(value))\n")
        lines.append(f"\n\ndef helper_{k:04d}(value, size):\n    return [value, size]\n")
        (pkg / f"mod_{k:04d}.py").write_text("".join(lines))


def test_a_cold_build_of_2000_files_keeps_the_process_tree_small(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _write_repo(repo)
    proc = subprocess.Popen(
        [sys.executable, "-c", BUILD, str(repo), str(tmp_path / "cache.db")],
        stdout=subprocess.PIPE,
        text=True,
    )
    sampler = TreeSampler(proc.pid, lambda pid: runs_module(pid, "repomap.worker")).start()
    out, _ = proc.communicate()
    sampler.stop()
    tree_peak, worker_peak, workers = sampler.tree_kb, sampler.child_kb, sampler.seen
    assert proc.returncode == 0
    parsed, shown = map(int, out.split())
    assert parsed == FILES and shown > 0
    assert workers, "a build of 2,000 files parses in a worker subprocess too"
    assert tree_peak < TREE_BOUND_MB * 1024, f"process tree peaked at {tree_peak // 1024} MB"
    assert worker_peak < WORKER_BOUND_MB * 1024, f"a parse worker reached {worker_peak // 1024} MB"
