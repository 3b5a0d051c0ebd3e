"""What the retrieval engine needs from an embedding model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 row vectors.

    ``model_id`` names the model; vectors stored under another id are
    recomputed, so switching models never mixes incomparable vectors."""

    @property
    def model_id(self) -> str: ...

    def encode(self, texts: Sequence[str]) -> Vectors: ...


def normalise_rows(matrix: npt.NDArray[np.floating]) -> Vectors:
    """Cast to float32 and scale each non-zero row to unit length."""
    out = np.asarray(matrix, dtype=np.float32)
    if out.ndim != 2:
        raise ValueError(f"expected a 2-D matrix of embeddings, got shape {out.shape}")
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0.0] = 1.0
    return np.ascontiguousarray(out / norms, dtype=np.float32)
