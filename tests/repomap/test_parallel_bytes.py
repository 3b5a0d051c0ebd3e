"""Parse workers start by the bytes of source to parse, not by the number of
files: 120 large modules get a second parser, 300 tiny ones or 300 large files
without a grammar do not (a worker's start costs more than their parse)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bonsai.services.repomap import indexer
from bonsai.services.repomap.discovery import IgnoreRules, discover


def _write(root: Path, count: int, name: str, body: str) -> Path:
    root.mkdir(parents=True)
    for k in range(count):
        (root / name.format(k=k)).write_text(body.format(k=k))
    return root


def _spawned(root: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    spawned: list[subprocess.Popen[str]] = []
    real = indexer.spawn_worker

    def counting() -> subprocess.Popen[str]:
        spawned.append(real())
        return spawned[-1]

    monkeypatch.setattr(indexer, "spawn_worker", counting)
    monkeypatch.setattr(indexer, "PARALLEL_MIN_BYTES", 256 * 1024)  # the decision, smaller
    candidates = discover(IgnoreRules(root)).files
    results = indexer.index_files(root, candidates, {}, workers=2)
    assert [r.path for r in results] == [c.path for c in candidates]
    assert all(r.outcome == "parsed" for r in results)
    return len(spawned)


LARGE = "".join(f"def handler_{{k}}_{m}(value):\n    return value + {m}\n\n\n" for m in range(120))


def test_few_large_sources_are_parsed_by_two_parsers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _write(tmp_path / "repo", 120, "mod_{k}.py", LARGE)
    assert _spawned(root, monkeypatch) == 1
    items = [(c, None) for c in discover(IgnoreRules(root)).files]
    assert indexer.source_bytes(items) > indexer.PARALLEL_MIN_BYTES


def test_many_tiny_sources_are_parsed_here_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _write(tmp_path / "repo", 300, "mod_{k}.py", "VALUE_{k} = {k}\n")
    assert _spawned(root, monkeypatch) == 0


def test_large_files_without_a_grammar_start_no_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _write(tmp_path / "repo", 300, "notes_{k}.txt", "a line of plain notes\n" * 120)
    assert _spawned(root, monkeypatch) == 0
    assert sum(c.size for c in discover(IgnoreRules(root)).files) > indexer.PARALLEL_MIN_BYTES
