"""The fast model (or the main one): one summary prompt in, its text out."""

from __future__ import annotations

import contextlib
import os

from bonsai.domain import Message
from bonsai.services.providers import make_provider
from bonsai.services.providers.types import ChatRequest, ProviderError, TextDelta
from bonsai.settings import Settings

SUMMARY_MAX_TOKENS = 2_000


async def fast_summary(settings: Settings, prompt: str) -> str:
    """Ask the configured fast model (or the main one) for the structured summary."""
    providers = settings.providers
    provider = make_provider(
        providers, env=os.environ, model=providers.fast_model or providers.model
    )
    request = ChatRequest(
        model=providers.fast_model or providers.model,
        messages=[Message(role="user", content=prompt)],
        max_tokens=SUMMARY_MAX_TOKENS,
    )
    text = ""
    try:
        async for event in provider.stream(request):
            if isinstance(event, TextDelta):
                text += event.text
    finally:
        with contextlib.suppress(Exception):
            await provider.aclose()
    if not text.strip():
        raise ProviderError("malformed", "the fast model returned an empty summary")
    return text
