"""A file whose one line is larger than the daemon's memory: ``read_file`` read a
file line by line, and a line is whatever lies between two newlines. A repository
file of 1.5 GB with no newline after its first bytes (a generated dump, a minified
bundle, a sparse file) was read into memory whole to show its first 2,000
characters: ``MemoryError`` under a 1 GB limit, the daemon killed by the kernel
without one.

The real tool, in a child process whose address space is capped at 1 GB."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

LIMIT_BYTES = 1024**3
FILE_BYTES = 1536 * 1024**2

CHILD = """
import asyncio, json, resource, sys
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
from bonsai.agent.tools import files
from bonsai.agent.tools.base import ToolContext, ToolFailure
from bonsai.settings import Settings
ctx = ToolContext(workspace=Path(sys.argv[1]), session_id="s", turn_id="t", settings=Settings())
try:
    result = asyncio.run(files.read_file(ctx, {{"path": "dump.sql", "limit": 3}}))
    print(json.dumps({{"content": result.content}}))
except BaseException as error:
    print(json.dumps({{"error": type(error).__name__ + ": " + str(error)[:200]}}))
"""


def test_a_file_of_one_huge_line_is_read_within_bounded_memory(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with (workspace / "dump.sql").open("wb") as dump:
        dump.write(b"INSERT INTO t VALUES " + b"(1,'x')," * 2000)  # text, then one endless line
        dump.truncate(FILE_BYTES)  # sparse: no disk, all of it read
    done = subprocess.run(
        [sys.executable, "-c", CHILD.format(limit=LIMIT_BYTES), str(workspace)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert "error" not in answer, answer["error"]
    first = answer["content"].splitlines()[0]
    assert first.startswith("     1\tINSERT INTO t VALUES (1,'x'),(1,'x'),")
    assert len(first) <= 2_000 + 7, "the line is shown cut, as any long line"
