"""Index many files: trusted rows in-process, the rest in chunks, in parallel
worker subprocesses for large builds (see ``worker.py``), with progress per chunk.
A ``FirstPass`` names files to index before all others; their results are
handed over as soon as every one of them is indexed, by whichever parser took
it (``first_map.py`` makes a first map of them).

The schedule keeps both kinds of parser busy until the last file: the workers
are fed from the queue at once, while this process chooses the first pass
(their start and their first chunks overlap that choice); the first pass's
files still queued then move to the front of the queue, in chunks of their
own, for every parser to take. Each worker has ``IN_FLIGHT`` chunks queued so
it never waits for this process to read its results, and the chunks go
largest files first, bounded in files and bytes, so the last chunks are small
and no parser idles long at the end. A worker that dies or answers nonsense
has its chunks indexed in this process (logged): the build is never partial.
Files whose path has shared tags (``shared_tags.py``: another checkout of the
project indexed it) are read and hashed here first, and those whose bytes were
indexed before take those tags instead of a parse.
"""

from __future__ import annotations

import logging
import subprocess
import threading
from collections import deque
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import NamedTuple

from bonsai.services.fs.confined import Workspace
from bonsai.services.repomap.cache import CachedFile
from bonsai.services.repomap.discovery import Candidate
from bonsai.services.repomap.indexer_core import (
    FileResult,
    Reuse,
    index_chunk,
    index_file,
    reuse_file,
)
from bonsai.services.repomap.languages import language_for_path
from bonsai.services.repomap.worker import decode_results, encode_request, spawn_worker

log = logging.getLogger(__name__)

Progress = Callable[[int, int, str], None]
Sink = Callable[[list[FileResult]], None]  # takes each batch of results as it is indexed
Chunk = list[tuple[Candidate, CachedFile | None]]
PARALLEL_MIN_BYTES = 4 << 20  # parse workers start for this many bytes with a grammar to parse
CHUNK_FILES = 32  # a chunk holds at most this many files ...
CHUNK_BYTES = 256 * 1024  # ... and ends once it holds this many bytes of source
IN_FLIGHT = 2  # chunks sent to a worker ahead of reading its results


class FirstPass(NamedTuple):
    """Files to index first and who receives their results (on the calling
    thread, while the workers go on with the rest)."""

    paths: Collection[str]
    deliver: Callable[[list[FileResult]], None]


class WorkerFailed(RuntimeError):
    """A parse worker died, or answered something other than its chunk's results."""


def _index_chunk(root: Path, chunk: Chunk) -> list[FileResult]:
    return index_chunk(root, chunk)


def source_bytes(items: Chunk) -> int:
    """The bytes of the files of ``items`` that have a grammar: what a parse
    costs (a file without one is only read and hashed)."""
    return sum(cand.size for cand, _ in items if language_for_path(cand.path) is not None)


def worth_workers(items: Chunk) -> bool:
    """Whether parsing ``items`` pays for starting parse workers (a worker's
    start, ~0.2 s of CPU, and ~20 MB, against half the parse): by bytes of
    source, not by files. Measured (docs/repomap.md, round 14): 1.5-2.4 MB of
    source (pylint, pytest) build sooner in one process, at 100-520 files."""
    return source_bytes(items) >= PARALLEL_MIN_BYTES


def make_chunks(items: Chunk) -> list[Chunk]:
    """``items`` in chunks, largest files first (ties by path): each chunk ends
    at ``CHUNK_FILES`` files or once it reaches ``CHUNK_BYTES``, so the chunks
    taken last are the quickest."""
    ordered = sorted(items, key=lambda item: (-item[0].size, item[0].path))
    chunks: list[Chunk] = []
    chunk: Chunk = []
    size = 0
    for item in ordered:
        chunk.append(item)
        size += item[0].size
        if len(chunk) >= CHUNK_FILES or size >= CHUNK_BYTES:
            chunks.append(chunk)
            chunk, size = [], 0
    if chunk:
        chunks.append(chunk)
    return chunks


class _Collector:
    """Gathers results from any thread and reports progress under one lock."""

    def __init__(self, total: int, progress: Progress | None, sink: Sink | None = None) -> None:
        self.results: dict[str, FileResult] = {}
        self.total = total
        self.progress = progress
        self.sink = sink
        self.lock = threading.Lock()

    def add(self, batch: list[FileResult], message: str = "") -> None:
        if self.sink is not None:
            self.sink(batch)
        with self.lock:
            for res in batch:
                self.results[res.path] = res
            if self.progress is not None:
                last = message or (batch[-1].path if batch else "")
                self.progress(len(self.results), self.total, f"repository map: {last}")


class _Queue:
    """The chunks left to index, taken from any thread, first chunk first."""

    def __init__(self, chunks: list[Chunk]) -> None:
        self._chunks = deque(chunks)
        self._lock = threading.Lock()

    def take(self) -> Chunk | None:
        with self._lock:
            return self._chunks.popleft() if self._chunks else None

    def prioritise(self, paths: Collection[str]) -> None:
        """Move the files of ``paths`` not taken yet to the front, in chunks of
        their own (``make_chunks``); the other chunks keep their order."""
        with self._lock:
            head: Chunk = []
            rest: list[Chunk] = []
            for chunk in self._chunks:
                keep = [item for item in chunk if item[0].path not in paths]
                if len(keep) < len(chunk):
                    head.extend(item for item in chunk if item[0].path in paths)
                if keep:
                    rest.append(keep)
            self._chunks = deque(make_chunks(head) + rest)

    def clear(self) -> None:
        with self._lock:
            self._chunks.clear()


class _Handover:
    """Delivers a ``FirstPass`` on the building thread once every one of its
    files is indexed, by whichever parser took it."""

    def __init__(self, first: FirstPass, paths: set[str], out: _Collector) -> None:
        self.first, self.paths, self.out = first, sorted(paths), out
        self.done = not paths

    def poll(self) -> None:
        if self.done:
            return
        with self.out.lock:
            results = [self.out.results.get(p) for p in self.paths]
        if any(r is None for r in results):
            return
        self.done = True
        _deliver(self.first, [r for r in results if r is not None])


def _drive_local(
    root: Path, queue: _Queue, out: _Collector, handover: _Handover | None = None
) -> None:
    """Index chunks in this thread until none are left (the calling process is
    one of the parsers: one subprocess fewer to start and to hold in memory),
    handing the first pass over as soon as it is complete."""
    while (chunk := queue.take()) is not None:
        out.add(_index_chunk(root, chunk))
        if handover is not None:
            handover.poll()


def _send(proc: subprocess.Popen[str], root: Path, chunk: Chunk) -> None:
    assert proc.stdin is not None
    try:
        proc.stdin.write(encode_request(str(root), chunk))
        proc.stdin.flush()
    except (OSError, ValueError) as exc:  # ValueError: the pipe is closed
        raise WorkerFailed(f"cannot send it a chunk: {exc}") from exc


def _receive(proc: subprocess.Popen[str], chunk: Chunk) -> list[FileResult]:
    """The results of ``chunk``, the oldest chunk in flight."""
    assert proc.stdout is not None
    try:
        line = proc.stdout.readline()
    except (OSError, ValueError) as exc:
        raise WorkerFailed(f"cannot read its results: {exc}") from exc
    if not line:
        raise WorkerFailed(f"it exited (code {proc.wait()})")
    try:
        results = decode_results(line)
    except (ValueError, TypeError, KeyError) as exc:
        raise WorkerFailed(f"unreadable results: {exc}") from exc
    if [r.path for r in results] != [cand.path for cand, _ in chunk]:
        raise WorkerFailed("its results are not those of the chunk it was sent")
    return results


def _drive_worker(root: Path, proc: subprocess.Popen[str], queue: _Queue, out: _Collector) -> None:
    """Feed chunks to one worker subprocess, ``IN_FLIGHT`` at a time, until none
    are left; if it fails, index its chunks in flight here and leave the rest
    of the queue to the other parsers."""
    flight: deque[Chunk] = deque()
    try:
        while True:
            while len(flight) < IN_FLIGHT and (chunk := queue.take()) is not None:
                flight.append(chunk)
                _send(proc, root, chunk)
            if not flight:
                return
            out.add(_receive(proc, flight[0]))
            flight.popleft()
    except WorkerFailed as exc:
        log.warning(
            "repomap: parse worker %s failed (%s); indexing its %d files in this process",
            proc.pid,
            exc,
            sum(len(c) for c in flight),
        )
        proc.kill()
        for chunk in flight:
            out.add(_index_chunk(root, chunk))
    finally:
        _stop(proc)


def _stop(proc: subprocess.Popen[str]) -> None:
    """End a worker: EOF on its input ends its loop. It is reaped on a daemon
    thread, so the build does not wait for its interpreter to shut down."""
    for pipe in (proc.stdin, proc.stdout):
        try:
            if pipe is not None:
                pipe.close()
        except OSError:
            pass  # already gone
    threading.Thread(target=_reap, args=(proc,), daemon=True).start()


def _reap(proc: subprocess.Popen[str]) -> None:
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _deliver(first: FirstPass, results: list[FileResult]) -> None:
    try:
        first.deliver(results)
    except Exception:  # a first map is an aid: it never breaks the build
        log.exception("repomap: the first map failed; the build goes on")


class Shared(NamedTuple):
    """Where tags of the same bytes may be found: the content hashes with an
    entry for each path that has one, and the entry's tags."""

    known: Callable[[list[str]], dict[str, frozenset[str]]]
    reuse: Reuse


def _reuse(root: Path, pending: Chunk, shared: Shared) -> tuple[Chunk, list[FileResult]]:
    """Split ``pending`` into the files still to parse and the results of those
    whose bytes were indexed before (this workspace's row or a shared entry)."""
    known = shared.known([cand.path for cand, _ in pending])
    if not known:
        return pending, []
    left: Chunk = []
    done: list[FileResult] = []
    try:
        ws = Workspace(root)
    except OSError:
        return pending, []
    with ws:
        for cand, row in pending:
            hashes = known.get(cand.path)
            res = None if not hashes else reuse_file(root, cand, row, hashes, shared.reuse, ws)
            if res is None:
                left.append((cand, row))
            else:
                done.append(res)
    return left, done


def index_files(
    root: Path,
    candidates: Sequence[Candidate],
    cached: dict[str, CachedFile],
    progress: Progress | None = None,
    workers: int = 0,
    first: Callable[[], FirstPass | None] | None = None,
    sink: Sink | None = None,
    shared: Shared | None = None,
) -> list[FileResult]:
    """Index every candidate; results come back in candidate order.

    Files whose stat matches their cached row are resolved in-process; the rest
    are parsed by ``workers`` parsers when those with a grammar hold at least
    ``PARALLEL_MIN_BYTES`` (and ``workers`` > 1): this process and
    ``workers - 1`` subprocesses, taking chunks from one queue; otherwise they
    are indexed in-process. ``first`` is called once the workers are parsing;
    the files of the ``FirstPass`` it returns that need a parse are indexed
    before all others still queued, and delivered once all are indexed.
    ``sink`` receives every batch of results as it is indexed, on the thread
    that indexed or received it (``core_stream.py`` builds the graph core so).
    With ``shared``, the files to index whose path has shared tags are read and
    hashed first; a hash with an entry takes its tags (outcome ``"shared"``)."""
    out = _Collector(len(candidates), progress, sink)
    pending: Chunk = []
    trusted: list[FileResult] = []
    for cand in candidates:
        row = cached.get(cand.path)
        if row is not None and (row.size, row.mtime_ns) == (cand.size, cand.mtime_ns):
            trusted.append(index_file(root, cand, row))
        else:
            pending.append((cand, row))
    reused: list[FileResult] = []
    if shared is not None and pending:
        pending, reused = _reuse(root, pending, shared)
        trusted.extend(reused)
    worth = worth_workers(pending)
    if reused and not worth:
        first = None  # few files left to parse: the whole map comes about as soon
    out.add(trusted, "cached files loaded")
    parallel = workers > 1 and worth
    queue = _Queue(make_chunks(pending))
    procs = [spawn_worker() for _ in range(workers - 1)] if parallel else []
    threads = [
        threading.Thread(target=_drive_worker, args=(root, proc, queue, out), daemon=True)
        for proc in procs
    ]
    for t in threads:  # the workers parse while the first pass is chosen
        t.start()
    try:
        early = first() if first is not None else None
    except BaseException:  # e.g. a bad token budget: the workers end their chunks in flight
        queue.clear()
        for t in threads:
            t.join()
        raise
    handover = None
    if early is not None:
        wanted = set(early.paths).intersection(cand.path for cand, _ in pending)
        if wanted:
            queue.prioritise(wanted)
            handover = _Handover(early, wanted, out)
    _drive_local(root, queue, out, handover)
    for t in threads:
        t.join()
    missing = [c.path for c in candidates if c.path not in out.results]
    if missing:  # never a partial map: every file is indexed or the build fails
        raise RuntimeError(f"repository map: {len(missing)} files not indexed ({missing[0]}, ...)")
    if handover is not None:
        handover.poll()  # the last of its files came from a worker
    return [out.results[c.path] for c in candidates]
