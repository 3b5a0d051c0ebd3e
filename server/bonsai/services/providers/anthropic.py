"""Anthropic Messages client (streaming) and the token-counting endpoint."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from functools import partial
from typing import Any

from bonsai.services.providers.anthropic_body import build_anthropic_body, build_count_tokens_body
from bonsai.services.providers.anthropic_stream import decode_anthropic
from bonsai.services.providers.transport import Transport, TransportOptions
from bonsai.services.providers.types import ChatRequest, ProviderError, ProviderEvent

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"


class AnthropicProvider:
    """One model on the Messages API. ``base_url`` is the host root; the client
    appends ``/v1/messages`` (as the official SDK does)."""

    family = "anthropic"

    def __init__(
        self, *, model: str, base_url: str, api_key: str | None, options: TransportOptions
    ) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self._headers = {
            "content-type": "application/json",
            "accept": "text/event-stream",
            "anthropic-version": API_VERSION,
        }
        if api_key:
            self._headers["x-api-key"] = api_key
        self._transport = Transport(options)
        self._label = options.label

    def __repr__(self) -> str:
        return f"AnthropicProvider(model={self.model!r}, base_url={self.base_url!r})"

    async def stream(self, req: ChatRequest) -> AsyncGenerator[ProviderEvent, None]:
        body = build_anthropic_body(req)
        decode = partial(decode_anthropic, label=self._label)
        url = f"{self.base_url}/v1/messages"
        async with aclosing(self._transport.stream(url, self._headers, body, decode)) as events:
            async for event in events:
                yield event

    async def count_tokens(self, req: ChatRequest) -> int:
        """Prompt tokens of ``req`` as Anthropic counts them (system, tools, messages)."""
        return await self.count_tokens_body(build_count_tokens_body(req))

    async def count_tokens_body(self, body: dict[str, Any]) -> int:
        """The same for a ready-made count_tokens body (``model``, ``messages``,
        optional ``system`` and ``tools``), e.g. from the token service."""
        headers = {**self._headers, "accept": "application/json"}
        url = f"{self.base_url}/v1/messages/count_tokens"
        data = await self._transport.post_json(url, headers, body)
        count = data.get("input_tokens")
        if not isinstance(count, int) or isinstance(count, bool):
            raise ProviderError("malformed", f"{self._label} count_tokens gave {count!r}")
        return count

    async def aclose(self) -> None:
        await self._transport.aclose()
