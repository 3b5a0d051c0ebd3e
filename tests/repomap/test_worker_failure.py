"""A parse worker that dies or answers nonsense mid-build: its chunks are indexed
in the building process (a warning says so) and the map is the map of a serial
build, never a partial one. The workers are real subprocesses running the real
worker loop, cut short."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from repomap_helpers import ServiceFactory

from bonsai.services.repomap import indexer
from bonsai.services.repomap.discovery import Candidate
from bonsai.services.repomap.first_map import FirstRequest
from bonsai.settings import RepoMapSettings

# the real worker loop, ending (os._exit: no clean shutdown) after one answered chunk
DIES_AFTER_ONE = """
import os, sys
from pathlib import Path
from bonsai.services.repomap.indexer_core import index_file
from bonsai.services.repomap.worker import _decode_request, encode_results
root, chunk = _decode_request(sys.stdin.readline())
sys.stdout.write(encode_results([index_file(Path(root), c, r, decode=False) for c, r in chunk]))
sys.stdout.flush()
os._exit(1)
"""
DIES_AT_ONCE = "import sys; sys.exit(3)"
ANSWERS_NOTHING = "import sys\nfor line in sys.stdin:\n    print('[]', flush=True)\n"
GARBLED = "import sys\nfor line in sys.stdin:\n    print('{not json', flush=True)\n"


def _spawner(code: str):
    def spawn() -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-c", code],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )

    return spawn


@pytest.mark.parametrize(
    ("code", "why"),
    [
        (DIES_AFTER_ONE, "exited (code 1)"),
        (DIES_AT_ONCE, ""),  # exited, or the pipe broke before it read anything
        (ANSWERS_NOTHING, "not those of the chunk"),
        (GARBLED, "unreadable results"),
    ],
)
def test_a_failing_worker_never_leaves_a_partial_map(
    code: str,
    why: str,
    repo: Path,
    tmp_path: Path,
    make_service: ServiceFactory,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    serial = make_service(repo, tmp_path / "serial.db", RepoMapSettings(workers=1))
    serial.build()
    monkeypatch.setattr(indexer, "PARALLEL_MIN_BYTES", 1)
    monkeypatch.setattr(indexer, "CHUNK_FILES", 4)  # 16 chunks: the worker gets several
    monkeypatch.setattr(indexer, "spawn_worker", _spawner(code))
    parallel = make_service(repo, tmp_path / "parallel.db", RepoMapSettings(workers=2))
    with caplog.at_level(logging.WARNING, logger="bonsai.services.repomap.indexer"):
        stats = parallel.build()
    assert stats.parsed == 64
    assert parallel.tags == serial.tags
    assert parallel.get(tokens=500).text == serial.get(tokens=500).text
    warned = [r.getMessage() for r in caplog.records if "parse worker" in r.getMessage()]
    assert warned, "a failed worker is reported"
    assert why in warned[0]
    assert "indexing its" in warned[0]


def test_the_next_build_after_a_failed_worker_is_warm(
    repo: Path, tmp_path: Path, make_service: ServiceFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rows of the chunks indexed again in-process reach the cache: a new
    service parses nothing."""
    monkeypatch.setattr(indexer, "PARALLEL_MIN_BYTES", 1)
    monkeypatch.setattr(indexer, "CHUNK_FILES", 4)
    monkeypatch.setattr(indexer, "spawn_worker", _spawner(DIES_AFTER_ONE))
    db = tmp_path / "cache.db"
    first = make_service(repo, db, RepoMapSettings(workers=2))
    first.build()
    first.stop()
    again = make_service(repo, db, RepoMapSettings(workers=2))
    stats = again.build()
    assert (stats.parsed, stats.trusted) == (0, 64)


def _items(sizes: list[int]) -> indexer.Chunk:
    return [(Candidate(f"f{i:03d}.py", size, 0), None) for i, size in enumerate(sizes)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 3 * indexer.CHUNK_BYTES), max_size=120))
def test_chunks_hold_every_file_once_largest_first(sizes: list[int]) -> None:
    items = _items(sizes)
    chunks = indexer.make_chunks(items)
    flat = [item for chunk in chunks for item in chunk]
    assert sorted(flat) == sorted(items)  # every file, once
    assert [i[0].size for i in flat] == sorted(sizes, reverse=True)  # largest first
    for chunk in chunks:
        assert 1 <= len(chunk) <= indexer.CHUNK_FILES
        assert sum(i[0].size for i in chunk[:-1]) < indexer.CHUNK_BYTES  # ends at the bound


def test_a_bad_first_map_request_leaves_no_worker_behind(
    repo: Path, tmp_path: Path, make_service: ServiceFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workers start before the first map's request is checked: a request
    the build refuses (a negative budget) ends them too."""
    started: list[subprocess.Popen[str]] = []
    real = indexer.spawn_worker

    def spawn() -> subprocess.Popen[str]:
        started.append(real())
        return started[-1]

    monkeypatch.setattr(indexer, "PARALLEL_MIN_BYTES", 1)
    monkeypatch.setattr(indexer, "spawn_worker", spawn)
    service = make_service(repo, tmp_path / "cache.db", RepoMapSettings(workers=2))
    with pytest.raises(ValueError, match="token budget"):
        service.build(first=FirstRequest(lambda _: None, tokens=-1))
    assert started
    for proc in started:
        assert proc.wait(timeout=20) == 0  # it saw the end of its input and exited
