"""Provider-true prices: the registry's, overridable in config, and the payback
rule under the prices that will be billed."""

from __future__ import annotations

from ctx_helpers import GC_SETTINGS, items_of, make_input, step, user

from bonsai.core.context import assemble
from bonsai.core.context.pricing import FAMILY_RULES, Pricing, break_even_calls, payback_ratio
from bonsai.services.providers.pricing import pricing_for
from bonsai.services.replay.billing import Bill, cost
from bonsai.settings import ModelInfo


def _pays_on_openai_not_anthropic() -> list:
    """An old 3,000-token output whose stub re-sends ~1,900 tokens after it: a
    saving of about 1.5 tokens per re-sent token."""
    messages = [user("fix it"), *step(0, "a" * 3_000, path="src/a.py")]
    messages += [m for n in range(1, 8) for m in step(n, "b" * 200, path=f"src/b{n}.py")]
    messages += step(8, "c" * 500, path="src/c.py")
    return items_of(messages)


def test_a_rewrite_that_pays_under_openai_prices_is_refused_under_anthropic_prices() -> None:
    items = _pays_on_openai_not_anthropic()
    settings = GC_SETTINGS.model_copy(update={"gc_trigger": 0.3})
    taken = {}
    for model in ("gpt-4o", "claude-sonnet-4-5"):
        inp = make_input(items, window=20_000, reserve=10_000, settings=settings)
        priced = inp.model_copy(update={"pricing": pricing_for(model)})
        taken[model] = "m3" in assemble(priced).state.stubs
    # gpt-4o reads its cache at half price with no write premium: a re-sent token
    # costs one call of a saved token's read; Anthropic writes at 1.25x and reads at
    # 0.1x: 11.5 calls. The same batch breaks even quickly on one, slowly on the other.
    assert taken == {"gpt-4o": True, "claude-sonnet-4-5": False}


def test_the_payback_rule_asks_for_the_same_break_even_under_every_provider() -> None:
    reference = FAMILY_RULES["openai"]
    anthropic = pricing_for("claude-sonnet-4-5")
    gpt4o = pricing_for("gpt-4o")
    assert payback_ratio(2.0, reference) == 2.0  # stated at the reference prices
    for pricing in (reference, anthropic, gpt4o):
        ratio = payback_ratio(2.0, pricing)
        # a batch exactly at the threshold breaks even after 4.5 later calls everywhere
        assert abs(break_even_calls(int(ratio * 10_000), 10_000, pricing) - 4.5) < 0.01
    assert payback_ratio(0.0, anthropic) == 0.0  # 0 still turns the rule off


def test_prices_come_from_the_registry_and_config_rows_override_them() -> None:
    claude = pricing_for("claude-sonnet-4-5")
    assert (claude.family, claude.ttl_seconds) == ("anthropic", 300)
    assert abs(claude.write_fraction - 1.25) < 1e-9 and abs(claude.read_fraction - 0.1) < 1e-9
    deepseek = pricing_for("deepseek-chat")
    assert deepseek.write_fraction == 1.0 and deepseek.ttl_seconds == 3_600
    hour = ModelInfo(
        family="anthropic",
        price_input=3.0,
        price_cached_input=0.3,
        price_cache_write=6.0,
        cache_ttl_s=3_600,
    )
    custom = pricing_for("my-claude", {"my-claude": hour})  # the 1-hour cache: writes 2x
    assert (custom.write_fraction, custom.ttl_seconds) == (2.0, 3_600)
    local = pricing_for("qwen2.5-coder")  # no prices: the family's relative rule
    assert (local.input, local.cached_read) == (1.0, 0.1)


def test_each_family_bills_its_own_granularity_ttl_and_write_premium() -> None:
    warm = [Bill(total=10_000, common=8_000, idle=10.0)]
    # OpenAI: 1,024 then 128-token steps (7,936 cached); DeepSeek 64-token units
    # (8,000); Anthropic the exact prefix, with the rest written at 1.25x
    assert cost(warm, "openai") == (10_000 - 7_936) + 0.1 * 7_936
    assert cost(warm, "deepseek") == 2_000 + 0.1 * 8_000
    assert cost(warm, "anthropic") == 1.25 * 2_000 + 0.1 * 8_000
    idle = [Bill(total=10_000, common=8_000, idle=900.0)]  # 15 minutes: past 5, within 60
    assert cost(idle, "openai") == 10_000 and cost(idle, "anthropic") == 12_500
    assert cost(idle, "deepseek") == cost(warm, "deepseek")
    assert Pricing(family="x", ttl_seconds=60).expired(61) and not Pricing(family="x").expired(None)
