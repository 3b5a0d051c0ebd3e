"""Fixtures for the repository-map tests (helpers live in repomap_helpers.py)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest
from repomap_helpers import ServiceFactory, chars4, write_repo

from bonsai.services.repomap import RepoMapService
from bonsai.settings import RepoMapSettings


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_repo(tmp_path / "repo")


@pytest.fixture
def make_service(tmp_path: Path) -> Iterator[ServiceFactory]:
    made: list[RepoMapService] = []

    def factory(
        root: Path, db: Path | None = None, settings: RepoMapSettings | None = None
    ) -> RepoMapService:
        service = RepoMapService(
            root,
            db or tmp_path / "cache" / "repomap.db",
            settings or RepoMapSettings(workers=1),
            chars4,
        )
        made.append(service)
        return service

    yield factory
    for service in made:
        service.stop()


@pytest.fixture(autouse=True)
def _unfreeze() -> Iterator[None]:
    """A service's first map freezes the process's live objects (``heap.py``);
    give them back to the collector after each test."""
    yield
    gc.unfreeze()
