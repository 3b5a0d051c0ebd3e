"""Offline static embeddings for memory (model2vec), and building the model.

Resolution order for the model folder: ``MemorySettings.model_path`` if set,
else ``$BONSAI_HOME/cache/memory-model/``. The folder's existence is checked
*before* calling model2vec, because ``StaticModel.from_pretrained`` treats a
missing local path as a hub repository id and would try to download it.

Without a usable model, memory search runs BM25-only and says why in its
``embeddings`` field (``"off: <reason>"``). A hub download is attempted only
when ``MemorySettings.allow_download`` is true, the hub is not switched off
(``HF_HUB_OFFLINE``), and no earlier attempt failed (a marker file records
the failure so a daemon start never retries in a loop).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bonsai.services.retrieval.embedder import Vectors, normalise_rows
from bonsai.settings import MemorySettings

ENV_SWITCH = "BONSAI_MEMORY_EMBEDDINGS"
MODEL_FILES = ("model.safetensors", "tokenizer.json", "config.json")
FAILED_MARKER = "memory-model.download-failed"

Fetch = Callable[[str, Path], None]


class StaticEmbedder:
    """A model2vec ``StaticModel`` behind the retrieval engine's Embedder protocol."""

    def __init__(self, path: Path) -> None:
        from model2vec import StaticModel

        self.path = path
        self._model = StaticModel.from_pretrained(str(path))
        self._model_id = f"model2vec:{_folder_digest(path)}"

    @property
    def model_id(self) -> str:
        return self._model_id

    def encode(self, texts: Sequence[str]) -> Vectors:
        # in this process: model2vec would fork workers above 10,000 texts
        return normalise_rows(self._model.encode(list(texts), use_multiprocessing=False))


def _folder_digest(path: Path) -> str:
    """Identity of a model folder: config bytes plus size and mtime of the weights."""
    digest = hashlib.sha256()
    for name in MODEL_FILES:
        file = path / name
        if not file.is_file():
            continue
        stat = file.stat()
        digest.update(f"{name}:{stat.st_size}:{stat.st_mtime_ns};".encode())
    digest.update((path / "config.json").read_bytes() if (path / "config.json").is_file() else b"")
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class EmbeddingLoad:
    """Result of :func:`load_embedder`: the embedder or ``None`` plus the status
    string shown to users (``"on"`` or ``"off: <reason>"``)."""

    embedder: StaticEmbedder | None
    status: str
    model_dir: Path


def model_dir(home: Path, settings: MemorySettings) -> Path:
    if settings.model_path:
        return Path(settings.model_path).expanduser()
    return home / "cache" / "memory-model"


def disabled_reason(settings: MemorySettings, env: Mapping[str, str]) -> str | None:
    if env.get(ENV_SWITCH, "").strip().lower() == "off":
        return f"disabled by {ENV_SWITCH}=off"
    if settings.embeddings == "off":
        return "disabled in settings (memory.embeddings = off)"
    return None


def load_embedder(
    home: Path,
    settings: MemorySettings,
    *,
    env: Mapping[str, str] | None = None,
    fetch: Fetch | None = None,
) -> EmbeddingLoad:
    """Load the static model, or explain why memory search is BM25-only."""
    env = os.environ if env is None else env
    folder = model_dir(home, settings)
    reason = disabled_reason(settings, env)
    if reason:
        return EmbeddingLoad(None, f"off: {reason}", folder)
    if not folder.is_dir():
        reason = _try_download(home, settings, folder, env, fetch)
        if reason:
            return EmbeddingLoad(None, f"off: {reason}", folder)
    try:
        return EmbeddingLoad(StaticEmbedder(folder), "on", folder)
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return EmbeddingLoad(None, f"off: model at {folder} failed to load: {first}", folder)


def _try_download(
    home: Path,
    settings: MemorySettings,
    folder: Path,
    env: Mapping[str, str],
    fetch: Fetch | None,
) -> str | None:
    """``None`` after a successful download, else the reason embeddings are off."""
    missing = f"no embedding model at {folder} (build one with `bonsai memory model build`)"
    if not settings.allow_download:
        return missing
    if _truthy(env.get("HF_HUB_OFFLINE")) or _truthy(env.get("TRANSFORMERS_OFFLINE")):
        return f"{missing}; download skipped: HF_HUB_OFFLINE is set"
    marker = home / "cache" / FAILED_MARKER
    if marker.exists():
        return f"{missing}; an earlier download failed (delete {marker} to retry)"
    try:
        (fetch or hub_fetch)(settings.model_name, folder)
    except Exception as exc:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(f"{settings.model_name}: {exc}\n", encoding="utf-8")
        return f"{missing}; download of {settings.model_name} failed: {exc}"
    return None if folder.is_dir() else f"{missing}; the download produced no folder"


def hub_fetch(model_name: str, folder: Path) -> None:
    """Download ``model_name`` from the Hugging Face hub into ``folder``
    (short timeouts: an unreachable hub fails within seconds)."""
    from huggingface_hub import snapshot_download

    staging = folder.with_name(folder.name + ".partial")
    snapshot_download(
        model_name,
        local_dir=staging,
        etag_timeout=5,
        allow_patterns=[*MODEL_FILES, "README.md"],
    )
    os.replace(staging, folder)


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in {"1", "true", "yes", "on"}
