"""The model registry: built-in rows, config rows winning, name matching,
clearly marked defaults and cost arithmetic."""

from __future__ import annotations

import pytest

from bonsai.services.providers import (
    BUILTIN_MODELS,
    UsageReport,
    all_models,
    cost_usd,
    lookup_model,
)
from bonsai.settings import ModelInfo


@pytest.mark.parametrize(
    "name",
    [
        "gpt-4o",
        "gpt-4o-mini",
        "gpt-4.1",
        "o3",
        "o4-mini",
        "claude-sonnet-4-5",
        "claude-haiku-4-5",
        "claude-opus-4-5",
        "deepseek-chat",
        "deepseek-reasoner",
        "qwen3-coder",
    ],
)
def test_common_models_are_built_in_with_sane_rows(name: str) -> None:
    row = lookup_model(name)
    assert row.source == "builtin" and row.matched == name
    info = row.info
    assert info.context_window > info.max_output > 0
    assert info.price_cached_input <= info.price_input <= info.price_output or info.family == "qwen"


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("openai/gpt-4.1", "gpt-4.1"),
        ("deepseek/deepseek-chat", "deepseek-chat"),
        ("qwen3-coder:30b", "qwen3-coder"),
        ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "qwen3-coder"),
        ("GPT-4O", "gpt-4o"),
    ],
)
def test_snapshots_router_prefixes_and_tags_resolve(name: str, key: str) -> None:
    row = lookup_model(name)
    assert (row.matched, row.source) == (key, "builtin")


def test_families_and_tokenizers() -> None:
    assert lookup_model("gpt-4o").info.tokenizer == "o200k_base"
    assert lookup_model("claude-haiku-4-5").info.family == "anthropic"
    assert (
        lookup_model("deepseek-reasoner").info.max_output
        > lookup_model("deepseek-chat").info.max_output
    )


def test_config_rows_win_over_built_in_ones() -> None:
    mine = ModelInfo(family="openai", context_window=64_000, max_output=4_000, price_input=9.0)
    row = lookup_model("gpt-4o", {"gpt-4o": mine})
    assert row.source == "config" and row.info.context_window == 64_000
    assert all_models({"my-local": mine})["my-local"] == mine
    assert lookup_model("my-local-v2", {"my-local": mine}).source == "config"


def test_unknown_models_get_a_marked_default_row_with_a_guessed_family() -> None:
    row = lookup_model("claude-mystery-9")
    assert row.source == "default" and row.matched is None
    assert "unknown model 'claude-mystery-9'" in row.note and "providers.models" in row.note
    assert row.info.family == "anthropic"
    assert lookup_model("llama-3.3-70b").info.family == "other"


def test_cost_counts_cache_reads_and_writes_at_their_prices() -> None:
    sonnet = BUILTIN_MODELS["claude-sonnet-4-5"]
    usage = UsageReport(
        input_tokens=1_000_000,
        output_tokens=100_000,
        cached_input_tokens=600_000,
        cache_creation_tokens=200_000,
    )
    # 200k uncached at $3 + 600k reads at $0.30 + 200k writes at $3.75 + 100k out at $15
    assert cost_usd(sonnet, usage) == pytest.approx(0.6 + 0.18 + 0.75 + 1.5)
    gpt = BUILTIN_MODELS["gpt-4o-mini"]
    plain = UsageReport(input_tokens=2_000_000, output_tokens=0, cached_input_tokens=1_000_000)
    assert cost_usd(gpt, plain) == pytest.approx(0.15 + 0.075)
