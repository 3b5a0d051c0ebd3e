"""The factory: flavours, base URLs, where keys come from, and the missing-key error."""

from __future__ import annotations

import pytest

from bonsai.services.providers import (
    AnthropicProvider,
    OpenAIChatProvider,
    ProviderError,
    make_provider,
    resolve_api_key,
)
from bonsai.settings import ProviderSettings

ENV = {"OPENAI_API_KEY": "o-key", "ANTHROPIC_API_KEY": "a-key", "DEEPSEEK_API_KEY": "d-key"}


@pytest.mark.parametrize(
    ("provider", "model", "cls", "base", "family"),
    [
        ("openai", "gpt-4o", OpenAIChatProvider, "https://api.openai.com/v1", "openai"),
        ("deepseek", "deepseek-chat", OpenAIChatProvider, "https://api.deepseek.com", "deepseek"),
        (
            "openai-compatible",
            "qwen3-coder:30b",
            OpenAIChatProvider,
            "http://127.0.0.1:11434/v1",
            "qwen",
        ),
        (
            "anthropic",
            "claude-sonnet-4-5",
            AnthropicProvider,
            "https://api.anthropic.com",
            "anthropic",
        ),
        ("sim", "gpt-4o-mini", OpenAIChatProvider, "http://127.0.0.1:8787/v1", "openai"),
    ],
)
async def test_each_provider_gets_its_wire_base_url_and_family(
    provider: str, model: str, cls: type, base: str, family: str
) -> None:
    made = make_provider(ProviderSettings(provider=provider, model=model), env=ENV)  # type: ignore[arg-type]
    assert isinstance(made, cls)
    assert (made.base_url, made.family, made.model) == (base, family, model)  # type: ignore[attr-defined]
    await made.aclose()


async def test_model_argument_overrides_settings_and_base_url_setting_wins() -> None:
    settings = ProviderSettings(
        provider="openai", model="gpt-4o", base_url="http://127.0.0.1:9/v1/"
    )
    made = make_provider(settings, env=ENV, model="gpt-4.1")
    assert made.model == "gpt-4.1" and made.base_url == "http://127.0.0.1:9/v1"  # type: ignore[attr-defined]
    await made.aclose()


def test_keys_come_from_settings_first_then_the_providers_variable() -> None:
    assert resolve_api_key(ProviderSettings(provider="deepseek"), ENV) == "d-key"
    assert resolve_api_key(ProviderSettings(provider="anthropic"), ENV) == "a-key"
    explicit = ProviderSettings(provider="openai", api_key="from-config")  # type: ignore[arg-type]
    assert resolve_api_key(explicit, ENV) == "from-config"


@pytest.mark.parametrize(
    ("provider", "variable"),
    [
        ("openai", "OPENAI_API_KEY"),
        ("anthropic", "ANTHROPIC_API_KEY"),
        ("deepseek", "DEEPSEEK_API_KEY"),
    ],
)
def test_a_missing_key_says_which_variable_to_set(provider: str, variable: str) -> None:
    with pytest.raises(ProviderError) as info:
        make_provider(ProviderSettings(provider=provider), env={"OTHER": "x"})  # type: ignore[arg-type]
    assert info.value.kind == "auth" and variable in info.value.message


def test_local_servers_and_the_simulator_need_no_key() -> None:
    assert resolve_api_key(ProviderSettings(provider="sim"), {}) is None
    assert resolve_api_key(ProviderSettings(provider="openai-compatible"), {}) is None
    # a third-party server never receives the OpenAI key by accident
    assert resolve_api_key(ProviderSettings(provider="openai-compatible"), ENV) is None
    assert (
        resolve_api_key(
            ProviderSettings(provider="openai-compatible"), {"OPENAI_COMPATIBLE_API_KEY": "x"}
        )
        == "x"
    )
