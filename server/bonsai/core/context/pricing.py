"""How providers bill input tokens, and what a rewrite costs under those rules.

Pure: no I/O, no clock. Prices are per million tokens (USD when they come from
the model registry, or relative to an uncached input token for the family
rules). Every provider reads a cached prefix cheaply and the rest at full
price; they differ in three ways:

- the **read price** of a cached token (OpenAI: a per-model fraction, 0.1× to
  0.5×; Anthropic 0.1×; DeepSeek's "cache hit" 0.1×);
- a **write premium** on the uncached tokens the cache stores (Anthropic:
  1.25× for a 5-minute cache, 2× for a 1-hour one; none elsewhere);
- how long an idle cache lives (**TTL**): Anthropic 5 minutes (or 1 hour),
  OpenAI's is evicted after 5–10 idle minutes, DeepSeek keeps its disk cache
  for hours.

A rewrite of content already sent loses the cache from the first changed
token on, so the tokens after it (``resent``) are billed at the write price
once instead of the read price; the ``saved`` tokens it removes are not read
again, at the read price, on every later call. It **breaks even** after
``resent × (write − read) / (saved × read)`` calls. ``min_rewrite_payback`` is
stated at the reference prices (OpenAI-style, cached reads 0.1×, no write
premium: a factor of 9), so the rule asks for the same break-even under any
provider's prices: a rewrite that pays back on OpenAI can be refused on
Anthropic, whose reads are as cheap but whose writes cost more.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

FamilyName = Literal["openai", "anthropic", "deepseek"]


class Pricing(BaseModel):
    """One model's input prices and cache lifetime."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    family: str
    input: float = Field(1.0, gt=0)  # an uncached input token (per million)
    cached_read: float = Field(0.1, ge=0)  # a token read from the prefix cache
    cache_write: float = Field(1.0, gt=0)  # an uncached token that the cache stores
    output: float = Field(0.0, ge=0)
    ttl_seconds: float = Field(300.0, gt=0)  # an idle cache is gone after this
    source: str = "family rule"  # where the numbers come from (report text)

    @property
    def read_fraction(self) -> float:
        return self.cached_read / self.input

    @property
    def write_fraction(self) -> float:
        return self.cache_write / self.input

    def payback_factor(self) -> float:
        """Calls of a saved token's read price that one re-sent token costs:
        ``(write − read) / read``; infinite when reads are free."""
        if self.cached_read <= 0:
            return float("inf")
        return (self.cache_write - self.cached_read) / self.cached_read

    def cost(self, uncached: int, cached: int) -> float:
        """One request's input cost in uncached-token units."""
        return uncached * self.write_fraction + cached * self.read_fraction

    def expired(self, idle_seconds: float | None) -> bool:
        """Whether a cache idle for ``idle_seconds`` is gone (``None``: unknown, kept)."""
        return idle_seconds is not None and idle_seconds > self.ttl_seconds


FAMILY_RULES: dict[FamilyName, Pricing] = {
    "openai": Pricing(family="openai", cached_read=0.1, ttl_seconds=300, source="OpenAI-style"),
    "anthropic": Pricing(
        family="anthropic",
        cached_read=0.1,
        cache_write=1.25,
        ttl_seconds=300,
        source="Anthropic-style, 5-minute cache",
    ),
    "deepseek": Pricing(
        family="deepseek", cached_read=0.1, ttl_seconds=3_600, source="DeepSeek-style hit/miss"
    ),
}
REFERENCE = FAMILY_RULES["openai"]  # what ``min_rewrite_payback`` is stated in


def family_rule(family: str) -> Pricing:
    """The relative rule of a family (unknown families bill like OpenAI)."""
    return FAMILY_RULES.get(family, REFERENCE)  # type: ignore[call-overload, no-any-return]


def payback_ratio(min_rewrite_payback: float, pricing: Pricing | None) -> float:
    """Tokens a batch must save per token it re-sends, under ``pricing``: the
    same break-even (in calls) as ``min_rewrite_payback`` at the reference prices."""
    if min_rewrite_payback <= 0:
        return 0.0
    if pricing is None:
        return min_rewrite_payback
    return min_rewrite_payback * pricing.payback_factor() / REFERENCE.payback_factor()


def break_even_calls(saved: int, resent: int, pricing: Pricing) -> float:
    """Later calls until a rewrite saving ``saved`` and re-sending ``resent`` pays back."""
    if resent <= 0:
        return 0.0
    if saved <= 0 or pricing.cached_read <= 0:
        return float("inf")
    return resent * (pricing.cache_write - pricing.cached_read) / (saved * pricing.cached_read)
