"""Build a :class:`ReplayConfig` from what a user names: model, window, preset."""

from __future__ import annotations

from pathlib import Path

from bonsai.core.context import Budget
from bonsai.core.context.presets import effective_context, with_preset
from bonsai.core.replay.report import ModelPrice
from bonsai.services.providers.registry import lookup_model
from bonsai.services.replay.policies import PolicyName
from bonsai.services.replay.prefix import Encode, granularity_for
from bonsai.services.replay.runner import ReplayConfig
from bonsai.services.tokens import (
    DeferredEstimator,
    HFTokenizerEstimator,
    TiktokenEstimator,
    TokenCounter,
    default_cache_dir,
    estimator_for,
)
from bonsai.settings import ContextSettings, ModelInfo, PresetName, ToolOutputSettings

DEFAULT_MODEL = "gpt-4o"


def encoder_of(counter: TokenCounter) -> Encode | None:
    """The token encoder behind ``counter``, when it has one (else prefixes use characters)."""
    estimator = counter.estimator
    if isinstance(estimator, DeferredEstimator):
        estimator = estimator.loaded()
    if isinstance(estimator, TiktokenEstimator):
        return estimator.encoding.encode_ordinary
    if isinstance(estimator, HFTokenizerEstimator):
        tokenizer = estimator.tokenizer
        return lambda text: tokenizer.encode(text, add_special_tokens=False).ids
    return None


def model_price(name: str, info: ModelInfo) -> ModelPrice | None:
    if info.price_input <= 0:
        return None
    return ModelPrice(
        model=name,
        input_usd_per_mtok=info.price_input,
        cached_input_usd_per_mtok=info.price_cached_input,
    )


def build_config(
    *,
    model: str = DEFAULT_MODEL,
    window: int | None = None,
    preset: PresetName | None = None,
    settings: ContextSettings | None = None,
    policy: PolicyName = "managed",
    offline: bool = True,
    cache_read_price: float = 0.1,
    cache_dir: Path | None = None,
    user_models: dict[str, ModelInfo] | None = None,
    tool_output: ToolOutputSettings | None = None,
) -> ReplayConfig:
    """A replay configuration; ``window`` overrides the model's context window."""
    row = lookup_model(model, user_models)
    info = row.info
    base = settings or ContextSettings()
    if preset is not None:
        base = with_preset(base, preset)
    effective = effective_context(base)
    size = window or info.context_window
    if size <= effective.output_reserve:
        raise ValueError(
            f"the window ({size:,}) is not larger than the output reserve "
            f"({effective.output_reserve:,}): use a larger --window or lower context.output_reserve"
        )
    counter = estimator_for(
        info, cache_dir=cache_dir or default_cache_dir(), tokenizer_path=None, model=model
    )
    return ReplayConfig(
        counter=counter,
        family=info.family,
        budget=Budget(window=size, reserve=effective.output_reserve),
        settings=effective,
        granularity=granularity_for(info.family),
        encode=encoder_of(counter),
        policy=policy,
        offline=offline,
        cache_read_price=cache_read_price,
        price=model_price(model, info),
        tool_output=tool_output or ToolOutputSettings(),
    )
