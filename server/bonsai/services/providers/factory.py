"""Build a ``Provider`` from settings: pick the wire, the base URL and the key.

Keys come from ``providers.api_key`` or, failing that, the provider's
environment variable. Keys never appear in messages or reprs.
"""

from __future__ import annotations

import os
import random
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx

from bonsai.env_names import KEY_ENV as KEY_ENV
from bonsai.services.providers.anthropic import DEFAULT_BASE_URL as ANTHROPIC_BASE_URL
from bonsai.services.providers.anthropic import AnthropicProvider
from bonsai.services.providers.anthropic_body import build_anthropic_body
from bonsai.services.providers.clients import ClientPool, ClientShape, key_digest
from bonsai.services.providers.openai_body import Flavour, build_openai_body
from bonsai.services.providers.openai_chat import DEFAULT_BASE_URLS, OpenAIChatProvider
from bonsai.services.providers.registry import lookup_model
from bonsai.services.providers.retry import OnRetry, RetryPolicy, Sleep
from bonsai.services.providers.transport import TransportOptions, real_sleep
from bonsai.services.providers.types import ChatRequest, Provider, ProviderError
from bonsai.services.redaction import register
from bonsai.settings import ProviderSettings

KEY_REQUIRED = frozenset({"openai", "anthropic", "deepseek"})
SIM_BASE_URL = "http://127.0.0.1:8787/v1"
FLAVOURS: dict[str, Flavour] = {
    "openai": "openai",
    "deepseek": "deepseek",
    "openai-compatible": "openai-compatible",
    "sim": "openai-compatible",
}


def resolve_api_key(settings: ProviderSettings, env: Mapping[str, str]) -> str | None:
    """The key to send, or None when the provider needs none (sim, local servers)."""
    if settings.api_key is not None and settings.api_key.get_secret_value():
        register(settings.api_key.get_secret_value())
        return settings.api_key.get_secret_value()
    var = KEY_ENV.get(settings.provider)
    key = env.get(var, "").strip() if var else ""
    if key:
        register(key)
        return key
    if settings.provider in KEY_REQUIRED:
        raise ProviderError(
            "auth",
            f"no API key for provider {settings.provider}: export {var} or set "
            "providers.api_key in ~/.bonsai/config.json ($BONSAI_HOME/config.json)",
        )
    return None


def base_url_for(settings: ProviderSettings) -> str:
    if settings.base_url:
        return settings.base_url
    if settings.provider == "anthropic":
        return ANTHROPIC_BASE_URL
    if settings.provider == "sim":
        return SIM_BASE_URL
    return DEFAULT_BASE_URLS[settings.provider]


def request_body(settings: ProviderSettings, req: ChatRequest) -> dict[str, Any]:
    """The JSON body the provider ``make_provider(settings)`` sends for ``req``
    (the same builders, chosen the same way): what the ledger's wire view shows."""
    if settings.provider == "anthropic":
        return build_anthropic_body(req)
    return build_openai_body(req, FLAVOURS[settings.provider])


def make_provider(
    settings: ProviderSettings,
    *,
    env: Mapping[str, str],
    model: str | None = None,
    sleep: Sleep | None = None,
    rng: random.Random | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    on_retry: OnRetry | None = None,
    clients: ClientPool | None = None,
) -> Provider:
    """``sleep``/``rng``/``transport`` are test seams; production passes none. With
    ``clients`` (the daemon's) the provider shares a kept client of its shape."""
    name = model or settings.model
    key = resolve_api_key(settings, env)
    base_url = base_url_for(settings)
    shape = ClientShape(
        base_url=base_url,
        key_digest=key_digest(key),
        cert_file=os.environ.get("SSL_CERT_FILE"),  # the CA setting, read as httpx reads it
        cert_dir=os.environ.get("SSL_CERT_DIR"),
        connect_timeout_s=settings.connect_timeout_s,
        read_timeout_s=settings.read_timeout_s,
    )
    options = TransportOptions(
        label=f"{settings.provider} at {urlsplit(base_url).netloc or base_url}",
        connect_timeout_s=settings.connect_timeout_s,
        read_timeout_s=settings.read_timeout_s,
        policy=RetryPolicy(
            max_retries=settings.max_retries,
            base_delay_s=settings.retry_base_delay_s,
            max_delay_s=settings.retry_max_delay_s,
            retry_after_cap_s=settings.retry_after_cap_s,
        ),
        secrets=(key,) if key else (),
        sleep=sleep or real_sleep,
        on_retry=on_retry,
        rng=rng or random.Random(),
        transport=transport,
        clients=clients,
        shape=shape,
    )
    if settings.provider == "anthropic":
        return AnthropicProvider(model=name, base_url=base_url, api_key=key, options=options)
    return OpenAIChatProvider(
        model=name,
        family=lookup_model(name, settings.models).info.family,
        flavour=FLAVOURS[settings.provider],
        base_url=base_url,
        api_key=key,
        options=options,
        require_done=settings.provider != "openai-compatible",
    )
