"""The parse workers start on the queue while the first map's files are chosen;
those files are then delivered from whichever parser took them, the workers'
answers included, and the first map is the same whoever parsed its files."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from repomap_helpers import ServiceFactory, write_repo

from bonsai.services.repomap import indexer
from bonsai.services.repomap.discovery import IgnoreRules, discover
from bonsai.services.repomap.first_map import FirstRequest
from bonsai.services.repomap.indexer_core import FileResult, index_file
from bonsai.services.repomap.records import RepoMap
from bonsai.settings import RepoMapSettings

TASK = "tools/leaf_utility.py: obscure_checksum_routine returns the wrong sum for empty data"


def test_first_pass_files_a_worker_parsed_before_the_choice_are_delivered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_repo(tmp_path / "repo", modules=60)
    monkeypatch.setattr(indexer, "PARALLEL_MIN_BYTES", 1)
    monkeypatch.setattr(indexer, "CHUNK_FILES", 4)
    candidates = discover(IgnoreRules(root)).files
    # the largest files: the first chunk, which only the worker can take while
    # this thread is still choosing; and the smallest, in the queue's last chunk
    by_size = sorted(candidates, key=lambda c: (-c.size, c.path))
    wanted = {c.path for c in by_size[:4]} | {by_size[-1].path}
    answered = threading.Event()
    delivered: list[tuple[list[FileResult], bool]] = []
    returned = False

    def progress(done: int, total: int, message: str) -> None:
        if done:
            answered.set()

    def choose() -> indexer.FirstPass:
        assert answered.wait(60), "the worker parses while the first pass is chosen"
        return indexer.FirstPass(wanted, lambda res: delivered.append((res, returned)))

    results = indexer.index_files(root, candidates, {}, progress, workers=2, first=choose)
    returned = True
    assert len(delivered) == 1
    handed, during_build = delivered[0]
    assert not during_build  # before the build returned
    assert {r.path for r in handed} == wanted
    serial = {c.path: index_file(root, c, None) for c in candidates}
    assert {r.path: r.tags for r in handed} == {p: serial[p].tags for p in wanted}
    assert [r.tags for r in results] == [serial[c.path].tags for c in candidates]


def test_the_first_map_is_the_same_whoever_parsed_its_files(
    tmp_path: Path, make_service: ServiceFactory
) -> None:
    root = write_repo(tmp_path / "repo", modules=240)
    maps: dict[int, list[RepoMap]] = {1: [], 2: []}
    for workers, seen in maps.items():
        service = make_service(root, tmp_path / f"{workers}.db", RepoMapSettings(workers=workers))
        service.build(first=FirstRequest(seen.append, (), TASK, 1024))
    assert len(maps[1]) == len(maps[2]) == 1
    serial, parallel = maps[1][0], maps[2][0]
    assert parallel.text == serial.text
    assert [f.path for f in parallel.files] == [f.path for f in serial.files]
    assert "obscure_checksum_routine" in parallel.text
