"""A parse worker loads only the tagging code: it stays small whatever it parses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from repomap_helpers import write_repo

from bonsai.services.repomap.discovery import Candidate
from bonsai.services.repomap.worker import encode_request, spawn_worker


def _peak_rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def test_the_worker_never_imports_the_service() -> None:
    code = (
        "import sys, json\n"
        "import bonsai.services.repomap.worker\n"
        "print(json.dumps(sorted(m for m in sys.modules"
        " if m.startswith(('bonsai', 'numpy', 'pydantic')))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout))
    assert "bonsai.services.repomap.service" not in loaded
    assert not any(m.startswith("numpy") for m in loaded)
    assert not any(m.startswith("pydantic") for m in loaded)  # ~0.2 s of a worker's start


def test_a_worker_parsing_many_files_stays_small(tmp_path: Path) -> None:
    root = write_repo(tmp_path / "repo")
    files = sorted(p for p in root.rglob("*.py"))
    proc = spawn_worker()
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for _ in range(5):  # the same files again and again: nothing may accumulate
            for i in range(0, len(files), 16):
                chunk = [
                    (Candidate(p.relative_to(root).as_posix(), p.stat().st_size, 0), None)
                    for p in files[i : i + 16]
                ]
                proc.stdin.write(encode_request(str(root), chunk))
                proc.stdin.flush()
                assert json.loads(proc.stdout.readline())
        assert _peak_rss_kb(proc.pid) < 80_000  # a worker that imports the service is ~55 MB
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)


def test_the_worker_starts_without_the_ignore_rules_or_sqlite() -> None:
    """A worker needs the tagging code alone: ``.gitignore`` matching and the
    SQLite cache are the building process's (0.1-0.2 s of a worker's start)."""
    code = (
        "import sys, json\n"
        "import bonsai.services.repomap.worker\n"
        "print(json.dumps(sorted(m.split('.')[0] for m in sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout))
    assert "tree_sitter" in loaded
    assert not loaded & {"pathspec", "apsw"}
