from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path

import pytest
from tiny_model2vec import build_tiny_model

from bonsai.services.memory.service import MemoryService
from bonsai.settings import MemorySettings

TODAY = date(2026, 7, 1)


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny-model"))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture
def make_service(
    home: Path, workspace: Path, tiny_model_dir: Path
) -> Iterator[Callable[..., MemoryService]]:
    """A service over temp stores; with the tiny model unless ``model=False``."""
    created: list[MemoryService] = []

    def make(*, model: bool = True, env: dict[str, str] | None = None, **settings: object):
        if model:
            settings.setdefault("model_path", str(tiny_model_dir))
        service = MemoryService(
            home,
            workspace,
            MemorySettings(**settings),  # type: ignore[arg-type]
            env=env or {},
            today=lambda: TODAY,
        )
        created.append(service)
        return service

    yield make
    for service in created:
        service.close()
