"""Helpers for the token tests (a uniquely named module, not conftest)."""

from __future__ import annotations

import json
from pathlib import Path

from tokenizers import Tokenizer, models, pre_tokenizers

WORDS = ["hello", "world", "def", "return", "[UNK]"]


def write_wordlevel(path: Path) -> Path:
    """A whitespace WordLevel tokenizer.json: one token per word, unknown words → [UNK]."""
    vocab = {word: i for i, word in enumerate(WORDS)}
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    path.parent.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(path))
    json.loads(path.read_text())  # a real tokenizer.json
    return path
