"""estimator_for: which tokenizer each model gets, and visible degradation."""

from __future__ import annotations

from pathlib import Path

import pytest

from bonsai.services.tokens import estimator_for
from bonsai.services.tokens.offline_tiktoken import cache_file_name
from bonsai.settings import ModelInfo

JAPANESE = "日本語のテキストを数える"  # 9 tokens in o200k_base, 12 in cl100k_base


@pytest.mark.parametrize(
    ("model", "tokenizer", "name", "tokens"),
    [
        ("gpt-4o", None, "tiktoken:o200k_base", 9),
        ("gpt-4.1-mini", None, "tiktoken:o200k_base", 9),
        ("o3", None, "tiktoken:o200k_base", 9),
        ("gpt-4", None, "tiktoken:cl100k_base", 12),
        ("gpt-3.5-turbo", None, "tiktoken:cl100k_base", 12),
        ("some-new-model", None, "tiktoken:o200k_base", 9),
        ("gpt-4o", "cl100k_base", "tiktoken:cl100k_base", 12),
    ],
)
def test_openai_models_get_their_encoding(
    rank_cache: Path, model: str, tokenizer: str | None, name: str, tokens: int
) -> None:
    info = ModelInfo(family="openai", tokenizer=tokenizer)
    counter = estimator_for(info, cache_dir=rank_cache, tokenizer_path=None, model=model)
    assert counter.name == name
    assert counter.count_text(JAPANESE).tokens == tokens


def test_configured_rank_file_path_is_used(rank_cache: Path, tmp_path: Path) -> None:
    source = tmp_path / "my.tiktoken"
    source.write_bytes((rank_cache / cache_file_name("cl100k_base")).read_bytes())
    info = ModelInfo(family="openai", tokenizer="cl100k_base")
    counter = estimator_for(info, cache_dir=tmp_path / "cache", tokenizer_path=str(source))
    assert counter.degraded_reason is None
    assert (tmp_path / "cache" / cache_file_name("cl100k_base")).is_file()


def test_tampered_rank_file_degrades_visibly_and_is_never_used(tmp_path: Path) -> None:
    source = tmp_path / "o200k_base.tiktoken"
    source.write_bytes(b"AAAA 0\n")
    counter = estimator_for(
        ModelInfo(family="openai"), cache_dir=tmp_path / "cache", tokenizer_path=str(source)
    )
    assert counter.name == "chars/4"
    assert counter.count_text(JAPANESE).confidence == "low"
    reason = counter.degraded_reason or ""
    assert str(source) in reason
    assert "tiktoken expects 446a9538" in reason
    assert not (tmp_path / "cache").exists()


def test_unknown_encoding_name_degrades_visibly(rank_cache: Path) -> None:
    info = ModelInfo(family="openai", tokenizer="p50k_base")
    counter = estimator_for(info, cache_dir=rank_cache, tokenizer_path=None)
    assert "unknown tiktoken encoding 'p50k_base'" in (counter.degraded_reason or "")
    assert counter.count_text("hello").confidence == "low"


def test_counts_are_deterministic_across_counters(rank_cache: Path) -> None:
    text = "def add(a, b):\n    return a + b\n" * 50
    counts = [
        estimator_for(
            ModelInfo(family=family), cache_dir=rank_cache, tokenizer_path=None, model="gpt-4o"
        ).count_text(text)
        for family in ("openai", "openai", "anthropic", "anthropic")
    ]
    assert counts[0] == counts[1]
    assert counts[2] == counts[3]
    assert counts[0].tokens == 12 * 50
