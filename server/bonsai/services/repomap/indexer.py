"""Index many files: trusted rows in-process, the rest in chunks, in parallel
worker subprocesses for large builds (see ``worker.py``), with progress per chunk.
A ``FirstPass`` names files to index before all others, in this process while
the workers start on the rest; their results are handed over as soon as they
are indexed (``first_map.py`` makes a first map of them).
"""

from __future__ import annotations

import logging
import subprocess
import threading
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import NamedTuple

from bonsai.services.repomap.cache import CachedFile
from bonsai.services.repomap.discovery import Candidate
from bonsai.services.repomap.indexer_core import FileResult, index_file
from bonsai.services.repomap.worker import decode_results, encode_request, spawn_worker

log = logging.getLogger(__name__)

Progress = Callable[[int, int, str], None]
Chunk = list[tuple[Candidate, CachedFile | None]]
PARALLEL_MIN_FILES = 200
CHUNK_FILES = 32


class FirstPass(NamedTuple):
    """Files to index first and who receives their results (on the calling
    thread, while the workers go on with the rest)."""

    paths: Collection[str]
    deliver: Callable[[list[FileResult]], None]


def _index_chunk(root: Path, chunk: Chunk) -> list[FileResult]:
    return [index_file(root, cand, cached) for cand, cached in chunk]


class _Collector:
    """Gathers results from any thread and reports progress under one lock."""

    def __init__(self, total: int, progress: Progress | None) -> None:
        self.results: dict[str, FileResult] = {}
        self.total = total
        self.progress = progress
        self.lock = threading.Lock()

    def add(self, batch: list[FileResult], message: str = "") -> None:
        with self.lock:
            for res in batch:
                self.results[res.path] = res
            if self.progress is not None:
                last = message or (batch[-1].path if batch else "")
                self.progress(len(self.results), self.total, f"repository map: {last}")


def _take(chunks: list[Chunk], lock: threading.Lock) -> Chunk | None:
    with lock:
        return chunks.pop() if chunks else None


def _drive_local(root: Path, chunks: list[Chunk], lock: threading.Lock, out: _Collector) -> None:
    """Index chunks in this thread until none are left (the calling process is
    one of the parsers: one subprocess fewer to start and to hold in memory)."""
    while (chunk := _take(chunks, lock)) is not None:
        out.add(_index_chunk(root, chunk))


def _drive_worker(root: Path, chunks: list[Chunk], lock: threading.Lock, out: _Collector) -> None:
    """Feed chunks to one worker subprocess until none are left."""
    proc: subprocess.Popen[str] | None = spawn_worker()
    try:
        while True:
            with lock:
                if not chunks:
                    return
                chunk = chunks.pop()
            out.add(_run_remote(proc, root, chunk) if proc else _index_chunk(root, chunk))
            if proc is not None and proc.poll() is not None:
                proc = None
    finally:
        if proc is not None and proc.stdin is not None:
            proc.stdin.close()
            proc.wait(timeout=30)


def _run_remote(proc: subprocess.Popen[str], root: Path, chunk: Chunk) -> list[FileResult]:
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(encode_request(str(root), chunk))
        proc.stdin.flush()
        line = proc.stdout.readline()
        if line:
            return decode_results(line)
    except (OSError, ValueError) as exc:
        log.warning("repomap: parse worker failed (%s); indexing in-process", exc)
    log.warning("repomap: parse worker %s exited early; indexing in-process", proc.pid)
    proc.kill()
    return _index_chunk(root, chunk)


def _deliver(first: FirstPass, results: list[FileResult]) -> None:
    try:
        first.deliver(results)
    except Exception:  # a first map is an aid: it never breaks the build
        log.exception("repomap: the first map failed; the build goes on")


def index_files(
    root: Path,
    candidates: Sequence[Candidate],
    cached: dict[str, CachedFile],
    progress: Progress | None = None,
    workers: int = 0,
    first: FirstPass | None = None,
) -> list[FileResult]:
    """Index every candidate; results come back in candidate order.

    Files whose stat matches their cached row are resolved in-process; the rest
    are parsed by ``workers`` parsers when there are at least
    ``PARALLEL_MIN_FILES`` of them (and ``workers`` > 1): this process and
    ``workers - 1`` subprocesses, taking chunks from one queue; otherwise they
    are indexed in-process. The files of ``first`` that need a parse are
    indexed before all others, in this process, and delivered at once."""
    out = _Collector(len(candidates), progress)
    pending: Chunk = []
    trusted: list[FileResult] = []
    for cand in candidates:
        row = cached.get(cand.path)
        if row is not None and (row.size, row.mtime_ns) == (cand.size, cand.mtime_ns):
            trusted.append(index_file(root, cand, row))
        else:
            pending.append((cand, row))
    out.add(trusted, "cached files loaded")
    wanted = set(first.paths) if first is not None else set()
    head = [item for item in pending if item[0].path in wanted]
    rest = [item for item in pending if item[0].path not in wanted] if head else pending
    chunks = [rest[i : i + CHUNK_FILES] for i in range(0, len(rest), CHUNK_FILES)]
    threads: list[threading.Thread] = []
    lock = threading.Lock()
    if workers > 1 and len(pending) >= PARALLEL_MIN_FILES:
        chunks.reverse()  # workers pop from the end: keep path order roughly
        threads = [
            threading.Thread(target=_drive_worker, args=(root, chunks, lock, out), daemon=True)
            for _ in range(workers - 1)
        ]
        for t in threads:
            t.start()
    if first is not None and head:
        results = _index_chunk(root, head)
        out.add(results)
        _deliver(first, results)
    if threads:
        _drive_local(root, chunks, lock, out)
        for t in threads:
            t.join()
    else:
        for chunk in chunks:
            out.add(_index_chunk(root, chunk))
    return [out.results[c.path] for c in candidates]
