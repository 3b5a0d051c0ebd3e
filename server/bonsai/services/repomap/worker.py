"""Parse worker subprocess for large builds (``spawn_worker`` starts one).

A plain subprocess speaking JSON lines (not ``multiprocessing``, whose ``spawn``
re-imports the caller's ``__main__`` and breaks unguarded scripts). Each input
line is ``{"root": ..., "files": [[path, size, mtime_ns, cached|null], ...]}``;
each output line is the list of results ``[path, outcome, row|null]`` where a
row is ``[size, mtime_ns, sha256, status, data]``. EOF on stdin ends the worker.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import subprocess
import sys
from pathlib import Path
from typing import IO

from bonsai.own_python import python_command
from bonsai.services.repomap.cache import CachedFile, CacheRow
from bonsai.services.repomap.discovery import Candidate
from bonsai.services.repomap.indexer_core import FileResult, index_chunk, tags_of

Request = tuple[str, list[tuple[Candidate, CachedFile | None]]]


def encode_request(root: str, chunk: list[tuple[Candidate, CachedFile | None]]) -> str:
    files = [[c.path, c.size, c.mtime_ns, None if r is None else list(r)] for c, r in chunk]
    return json.dumps({"root": root, "files": files}) + "\n"


def _decode_request(line: str) -> Request:
    req = json.loads(line)
    chunk = [
        (Candidate(f[0], f[1], f[2]), None if f[3] is None else CachedFile(*f[3]))
        for f in req["files"]
    ]
    return req["root"], chunk


def encode_results(results: list[FileResult]) -> str:
    out = [[r.path, r.outcome, None if r.row is None else list(r.row.file)] for r in results]
    return json.dumps(out) + "\n"


def decode_results(line: str) -> list[FileResult]:
    results: list[FileResult] = []
    for path, outcome, raw in json.loads(line):
        row = None if raw is None else CacheRow(path, CachedFile(*raw))
        results.append(FileResult(path, outcome, row, None if row is None else tags_of(row)))
    return results


PIPE_BYTES = 1 << 20


def spawn_worker() -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        python_command("-c", "from bonsai.services.repomap.worker import main; main()"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    _widen(proc.stdout)
    return proc


def _widen(pipe: IO[str] | None) -> None:
    """A chunk's results fit the pipe, so a worker never waits on its writes
    while this process is busy parsing (Linux; elsewhere the default stays)."""
    if pipe is None or not hasattr(fcntl, "F_SETPIPE_SZ"):
        return
    with contextlib.suppress(OSError):
        fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        root, chunk = _decode_request(line)
        sys.stdout.write(encode_results(index_chunk(Path(root), chunk, decode=False)))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
