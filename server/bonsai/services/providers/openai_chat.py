"""Chat Completions client for OpenAI, DeepSeek and OpenAI-compatible servers
(Ollama, vLLM, llama.cpp, OpenRouter, the bonsai simulator)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from functools import partial

from bonsai.services.providers.openai_body import Flavour, build_openai_body
from bonsai.services.providers.openai_stream import decode_openai, decode_openai_reply
from bonsai.services.providers.transport import Transport, TransportOptions
from bonsai.services.providers.types import ChatRequest, ProviderEvent

DEFAULT_BASE_URLS: dict[str, str] = {
    "openai": "https://api.openai.com/v1",
    "deepseek": "https://api.deepseek.com",
    "openai-compatible": "http://127.0.0.1:11434/v1",  # Ollama's default
}


class OpenAIChatProvider:
    """One model on one Chat Completions endpoint. ``base_url`` ends where the
    API's paths start (``…/v1`` for OpenAI); ``/chat/completions`` is appended."""

    def __init__(
        self,
        *,
        model: str,
        family: str,
        flavour: Flavour,
        base_url: str,
        api_key: str | None,
        options: TransportOptions,
        require_done: bool | None = None,
    ) -> None:
        self.model = model
        self.family = family
        self.flavour: Flavour = flavour
        self.base_url = base_url.rstrip("/")
        self._headers = {"content-type": "application/json", "accept": "text/event-stream"}
        if api_key:
            self._headers["authorization"] = f"Bearer {api_key}"
        self._transport = Transport(options)
        self._label = options.label
        self._require_done = (
            flavour != "openai-compatible" if require_done is None else require_done
        )

    def __repr__(self) -> str:
        return (
            f"OpenAIChatProvider(flavour={self.flavour!r}, model={self.model!r}, "
            f"base_url={self.base_url!r})"
        )

    def stream(self, req: ChatRequest) -> AsyncGenerator[ProviderEvent, None]:
        """The reply's events: the transport's own generator, not one wrapped around it."""
        body = build_openai_body(req, self.flavour)
        decode = partial(decode_openai, label=self._label, require_done=self._require_done)
        url = f"{self.base_url}/chat/completions"
        return self._transport.stream(url, self._headers, body, decode)

    async def complete(self, req: ChatRequest) -> AsyncGenerator[ProviderEvent, None]:
        """The same request answered whole (``stream: false``), as the same events:
        for servers that cannot stream some replies (llama-cpp-python's
        chatml-function-calling refuses to stream a tool call it chose itself)."""
        body = build_openai_body(req, self.flavour)
        body["stream"] = False
        body.pop("stream_options", None)
        headers = {**self._headers, "accept": "application/json"}
        reply = await self._transport.post_json(f"{self.base_url}/chat/completions", headers, body)
        for event in decode_openai_reply(reply, self._label):
            yield event

    async def aclose(self) -> None:
        await self._transport.aclose()
