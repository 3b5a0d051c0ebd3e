"""The prices a model is billed at, from the models registry (config rows win).

``pricing_for`` turns a registry row into a :class:`bonsai.core.context.pricing.Pricing`:
its list prices when it has them, else its family's relative rule
(``bonsai.core.context.pricing.FAMILY_RULES``); the cache TTL is the row's
``cache_ttl_s`` or the family's. A row without a cache-read price bills reads
at its family's fraction of the input price; one without ``price_cache_write``
writes at its family's premium (Anthropic 1.25×, none elsewhere).
"""

from __future__ import annotations

from collections.abc import Mapping

from bonsai.core.context.pricing import Pricing, family_rule
from bonsai.services.providers.registry import lookup_model
from bonsai.settings import ModelInfo


def pricing_of(info: ModelInfo, *, name: str = "") -> Pricing:
    rule = family_rule(info.family)
    ttl = info.cache_ttl_s or rule.ttl_seconds
    if info.price_input <= 0:
        return rule.model_copy(update={"ttl_seconds": ttl, "family": info.family})
    read = info.price_cached_input if info.price_cached_input > 0 else None
    write = info.price_cache_write
    return Pricing(
        family=info.family,
        input=info.price_input,
        cached_read=read if read is not None else info.price_input * rule.read_fraction,
        cache_write=write if write is not None else info.price_input * rule.write_fraction,
        output=info.price_output,
        ttl_seconds=ttl,
        source=f"{name or 'model'} list prices",
    )


def pricing_for(name: str, user_models: Mapping[str, ModelInfo] | None = None) -> Pricing:
    """The prices ``name`` is billed at (registry row, config rows first)."""
    row = lookup_model(name, user_models)
    return pricing_of(row.info, name=name)
