"""Build a tiny but real model2vec model on disk, for tests.

A word-level ``tokenizer.json`` (built with the ``tokenizers`` library), a
``model.safetensors`` holding the ``embeddings`` matrix and a ``config.json``:
exactly the layout ``StaticModel.from_pretrained`` loads. Words of one topic
share a direction, so synonyms without a shared spelling are close.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from safetensors.numpy import save_file
from tokenizers import Tokenizer, normalizers, pre_tokenizers
from tokenizers.models import WordLevel

TOPICS: dict[str, list[str]] = {
    "build": ["compiler", "ponyc", "build", "make", "configure", "binary", "compile", "toolchain"],
    "format": ["formatter", "format", "formatting", "ruff", "lint", "linting", "black", "style"],
    "database": ["database", "sqlite", "lock", "locked", "busy", "timeout", "writers", "apsw"],
    "time": ["utc", "timezone", "zone", "timestamps", "dates", "clock", "local"],
    "editor": ["editor", "neovim", "vscode", "plugin", "plugins", "extension", "extensions"],
    "cooking": ["recipe", "grams", "oven", "flour", "bake", "ingredients"],
}
FILLER = [
    "the", "a", "is", "use", "with", "for", "and", "of", "to", "in", "run", "then", "we",
    "project", "code", "python", "prefer", "never", "always", "file", "files", "test",
    "tests", "notes", "quarterly", "report",
]  # fmt: skip
DIM = 16


def vocabulary() -> list[str]:
    words = ["[UNK]"]
    for group in TOPICS.values():
        words.extend(w for w in group if w not in words)
    words.extend(w for w in FILLER if w not in words)
    return words


def embeddings(words: list[str], seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    bases = {topic: rng.normal(size=DIM) for topic in TOPICS}
    topic_of = {w: t for t, group in TOPICS.items() for w in group}
    rows = []
    for word in words:
        if word in topic_of:
            row = bases[topic_of[word]] + 0.25 * rng.normal(size=DIM)
        else:
            row = 0.35 * rng.normal(size=DIM)
        rows.append(row)
    return np.asarray(rows, dtype=np.float32)


def build_tiny_model(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    words = vocabulary()
    tokenizer = Tokenizer(WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.save(str(folder / "tokenizer.json"))
    save_file({"embeddings": embeddings(words)}, str(folder / "model.safetensors"))
    config = {"model_type": "model2vec", "hidden_dim": DIM, "normalize": True}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder
