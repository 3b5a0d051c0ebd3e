"""Reading file/identifier mentions out of task text; parallel parse workers."""

from __future__ import annotations

from pathlib import Path

from repomap_helpers import ServiceFactory

from bonsai.services.repomap import indexer
from bonsai.services.repomap.mentions import build_path_index, parse_mentions
from bonsai.settings import RepoMapSettings

PATHS = [
    "http/client.py",
    "http/__init__.py",
    "email/header.py",
    "tools/shlex.py",
    "a/util.py",
    "b/util.py",
    "c/util.py",
    "d/util.py",
]
DEFINED = {"HTTPConnection": 1, "putheader": 1, "open": 1, "parse_header_value": 1}


def test_paths_modules_and_stems() -> None:
    index = build_path_index(PATHS)
    found = parse_mentions(
        "see email/header.py and http.client, also shlex; util.py is everywhere", index, DEFINED
    ).files
    assert found == {
        "email/header.py": 1.0,  # a path
        "http/client.py": 1.0,  # a dotted module
        "http/__init__.py": 0.5,  # the package "http" by its stem
        "tools/shlex.py": 0.5,  # a bare module stem
    }  # util.py names four files: too ambiguous to boost any


def test_identifier_weights_prefer_specific_and_code_names() -> None:
    index = build_path_index(PATHS)
    idents = parse_mentions(
        "`putheader` fails; HTTPConnection and parse_header_value too, open it", index, DEFINED
    ).idents
    assert idents["parse_header_value"] == 1.0
    assert idents["HTTPConnection"] == 1.0
    assert idents["putheader"] > idents["open"]  # written as code vs a plain word
    assert "fails" not in idents  # not defined in the repository


def test_worker_processes_give_the_same_tags(
    repo: Path, tmp_path: Path, make_service: ServiceFactory, monkeypatch
) -> None:
    serial = make_service(repo, tmp_path / "serial.db", RepoMapSettings(workers=1))
    serial.build()
    monkeypatch.setattr(indexer, "PARALLEL_MIN_BYTES", 1)
    parallel = make_service(repo, tmp_path / "parallel.db", RepoMapSettings(workers=2))
    stats = parallel.build()
    assert stats.parsed == 64
    assert parallel.tags == serial.tags
    assert parallel.get(tokens=500).text == serial.get(tokens=500).text
