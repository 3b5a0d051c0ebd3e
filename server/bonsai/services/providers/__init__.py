"""LLM provider clients: OpenAI-style Chat Completions and Anthropic Messages
over httpx + SSE, the model registry and the provider factory.

Callers build a ``ChatRequest``, get a ``Provider`` from ``make_provider`` and
iterate ``provider.stream(req)`` for ``ProviderEvent`` values. Every failure is
a ``ProviderError`` with a ``kind``.
"""

from bonsai.services.providers.anthropic import AnthropicProvider
from bonsai.services.providers.factory import make_provider, resolve_api_key
from bonsai.services.providers.openai_chat import OpenAIChatProvider
from bonsai.services.providers.registry import (
    BUILTIN_MODELS,
    ModelRow,
    all_models,
    cost_usd,
    lookup_model,
)
from bonsai.services.providers.types import (
    ChatRequest,
    ErrorKind,
    Provider,
    ProviderError,
    ProviderEvent,
    StreamDone,
    SystemBlock,
    TextDelta,
    ToolCallArgsDelta,
    ToolCallDone,
    ToolCallStarted,
    ToolSpec,
    UsageReport,
)

__all__ = [
    "BUILTIN_MODELS",
    "AnthropicProvider",
    "ChatRequest",
    "ErrorKind",
    "ModelRow",
    "OpenAIChatProvider",
    "Provider",
    "ProviderError",
    "ProviderEvent",
    "StreamDone",
    "SystemBlock",
    "TextDelta",
    "ToolCallArgsDelta",
    "ToolCallDone",
    "ToolCallStarted",
    "ToolSpec",
    "UsageReport",
    "all_models",
    "cost_usd",
    "lookup_model",
    "make_provider",
    "resolve_api_key",
]
