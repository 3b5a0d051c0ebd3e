from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from bonsai.services.memory.embedding import StaticEmbedder
from bonsai.services.retrieval import HybridIndex, open_index

_HELPER = Path(__file__).parents[1] / "memory" / "tiny_model2vec.py"


def _tiny_module():
    if "tiny_model2vec" in sys.modules:
        return sys.modules["tiny_model2vec"]
    spec = importlib.util.spec_from_file_location("tiny_model2vec", _HELPER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["tiny_model2vec"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def tiny_embedder(tmp_path_factory: pytest.TempPathFactory) -> StaticEmbedder:
    folder = _tiny_module().build_tiny_model(tmp_path_factory.mktemp("tiny-model"))
    return StaticEmbedder(folder)


@pytest.fixture
def index_conn(tmp_path: Path):
    conn = open_index(tmp_path / "index.db")
    yield conn
    conn.close()


@pytest.fixture
def hybrid(index_conn, tiny_embedder) -> HybridIndex:
    return HybridIndex(index_conn, "test", tiny_embedder)
