"""The model registry: context window, output limit, tokenizer and prices.

Built-in rows cover common models at public list prices (USD per million
tokens, standard tier, short-context pricing where tiered; check your
provider's page and override in config). Rows from ``providers.models`` win
over built-in ones. Names are matched exactly first, then after dropping a
router prefix (``openai/gpt-4o``), an Ollama tag (``qwen3-coder:30b``) or a
snapshot date (``gpt-4o-2024-08-06``), then by the longest registered prefix.
An unknown model gets a default row with ``source="default"`` and a note.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict

from bonsai.services.providers.types import UsageReport
from bonsai.settings import ModelInfo

Source = Literal["builtin", "config", "default"]


def _openai(ctx: int, out: int, price_in: float, cached: float, price_out: float) -> ModelInfo:
    return ModelInfo(
        family="openai",
        context_window=ctx,
        max_output=out,
        tokenizer="o200k_base",
        price_input=price_in,
        price_cached_input=cached,
        price_output=price_out,
    )


def _claude(ctx: int, out: int, price_in: float, price_out: float) -> ModelInfo:
    # Anthropic: cache reads cost 0.1x input, 5-minute cache writes 1.25x input.
    return ModelInfo(
        family="anthropic",
        context_window=ctx,
        max_output=out,
        price_input=price_in,
        price_cached_input=round(price_in * 0.1, 4),
        price_output=price_out,
        price_cache_write=round(price_in * 1.25, 4),
    )


def _deepseek(out: int) -> ModelInfo:
    return ModelInfo(
        family="deepseek",
        context_window=128_000,
        max_output=out,
        price_input=0.28,
        price_cached_input=0.028,
        price_output=0.42,
    )


def _local(family: Literal["qwen", "other"], ctx: int, out: int) -> ModelInfo:
    return ModelInfo(family=family, context_window=ctx, max_output=out)


BUILTIN_MODELS: dict[str, ModelInfo] = {
    "gpt-4o": _openai(128_000, 16_384, 2.50, 1.25, 10.00),
    "gpt-4o-mini": _openai(128_000, 16_384, 0.15, 0.075, 0.60),
    "gpt-4.1": _openai(1_047_576, 32_768, 2.00, 0.50, 8.00),
    "gpt-4.1-mini": _openai(1_047_576, 32_768, 0.40, 0.10, 1.60),
    "gpt-4.1-nano": _openai(1_047_576, 32_768, 0.10, 0.025, 0.40),
    "o3": _openai(200_000, 100_000, 2.00, 0.50, 8.00),
    "o3-mini": _openai(200_000, 100_000, 1.10, 0.55, 4.40),
    "o4-mini": _openai(200_000, 100_000, 1.10, 0.275, 4.40),
    "gpt-5": _openai(400_000, 128_000, 1.25, 0.125, 10.00),
    "gpt-5-mini": _openai(400_000, 128_000, 0.25, 0.025, 2.00),
    "claude-fable-5-1": _claude(1_000_000, 128_000, 10.00, 50.00),
    "claude-opus-5-5": _claude(1_000_000, 128_000, 4.00, 20.00),
    "claude-sonnet-5-5": _claude(1_000_000, 128_000, 2.00, 10.00),
    "claude-opus-5": _claude(1_000_000, 128_000, 5.00, 25.00),
    "claude-sonnet-5": _claude(1_000_000, 128_000, 2.00, 10.00),
    "claude-opus-4-6": _claude(1_000_000, 128_000, 5.00, 25.00),
    "claude-sonnet-4-6": _claude(1_000_000, 128_000, 3.00, 15.00),
    "claude-opus-4-5": _claude(200_000, 64_000, 5.00, 25.00),
    "claude-sonnet-4-5": _claude(200_000, 64_000, 3.00, 15.00),
    "claude-haiku-4-5": _claude(200_000, 64_000, 1.00, 5.00),
    "claude-opus-4-1": _claude(200_000, 32_000, 15.00, 75.00),
    "claude-opus-4": _claude(200_000, 32_000, 15.00, 75.00),
    "claude-sonnet-4": _claude(200_000, 64_000, 3.00, 15.00),
    "claude-3-5-haiku": _claude(200_000, 8_192, 0.80, 4.00),
    "deepseek-chat": _deepseek(8_192),
    "deepseek-reasoner": _deepseek(65_536),
    "qwen3-coder": _local("qwen", 262_144, 65_536),
    "qwen2.5-coder": _local("qwen", 32_768, 8_192),
}

# An unknown model gets a small window: one too small only compacts early, one too
# large plans for context the model does not have (the server refuses or truncates).
DEFAULT_ROW = ModelInfo(context_window=32_768, max_output=8_192)  # no tokenizer, no prices
_DATE_SUFFIX = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$")


class ModelRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    info: ModelInfo
    source: Source
    matched: str | None = None  # the registry key that matched, if any
    note: str = ""


def normalise_name(name: str) -> str:
    """Strip a router prefix, an Ollama tag and a snapshot date."""
    base = name.strip().lower().rsplit("/", 1)[-1].split(":", 1)[0]
    return _DATE_SUFFIX.sub("", base)


def _longest_prefix(name: str, keys: list[str]) -> str | None:
    hits = [k for k in keys if name == k or name.startswith(k + "-")]
    return max(hits, key=len) if hits else None


def guess_family(name: str) -> Literal["openai", "anthropic", "deepseek", "qwen", "other"]:
    lowered = name.lower()
    for prefix, family in (("claude", "anthropic"), ("deepseek", "deepseek"), ("qwen", "qwen")):
        if prefix in lowered:
            return family  # type: ignore[return-value]
    if re.match(r"(gpt-|o\d)", normalise_name(name)):
        return "openai"
    return "other"


def lookup_model(name: str, user_models: Mapping[str, ModelInfo] | None = None) -> ModelRow:
    merged = {**BUILTIN_MODELS, **{k.lower(): v for k, v in (user_models or {}).items()}}
    user_keys = {k.lower() for k in user_models or {}}
    key = next((k for k in (name.lower(), normalise_name(name)) if k in merged), None)
    key = key or _longest_prefix(normalise_name(name), list(merged))
    if key is not None:
        source: Source = "config" if key in user_keys else "builtin"
        return ModelRow(name=name, info=merged[key], source=source, matched=key)
    info = DEFAULT_ROW.model_copy(update={"family": guess_family(name)})
    note = (
        f"unknown model {name!r}: using defaults ({info.context_window:,} context, "
        f"{info.max_output:,} output, no prices); unknown window: set "
        f"providers.models.{name}.context_window"
    )
    return ModelRow(name=name, info=info, source="default", note=note)


def all_models(user_models: Mapping[str, ModelInfo] | None = None) -> dict[str, ModelInfo]:
    return {**BUILTIN_MODELS, **{k.lower(): v for k, v in (user_models or {}).items()}}


def cost_usd(info: ModelInfo, usage: UsageReport) -> float:
    """What one call cost at the row's prices (cache writes at ``price_cache_write``)."""
    uncached = usage.input_tokens - usage.cached_input_tokens - usage.cache_creation_tokens
    write_price = info.price_input if info.price_cache_write is None else info.price_cache_write
    total = (
        max(uncached, 0) * info.price_input
        + usage.cached_input_tokens * info.price_cached_input
        + usage.cache_creation_tokens * write_price
        + usage.output_tokens * info.price_output
    )
    return total / 1_000_000
