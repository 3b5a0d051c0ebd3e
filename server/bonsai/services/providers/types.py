"""Provider-neutral request and stream-event types, and the one provider error.

Every client turns its wire format into these types at one boundary, so the
agent layer never sees a provider's JSON. Stop reasons are normalised to one
vocabulary: ``end_turn``, ``tool_use``, ``max_tokens``, ``refusal``; anything
else is passed through as the provider sent it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Annotated, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from bonsai.domain import Message, ToolCall
from bonsai.services.redaction import redact

ErrorKind = Literal[
    "rate_limit",
    "server",
    "timeout",
    "connect",
    "broken_stream",
    "malformed",
    "auth",
    "bad_request",
    "cancelled",
]

RETRYABLE_KINDS: frozenset[str] = frozenset(
    {"rate_limit", "server", "timeout", "connect", "broken_stream"}
)


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolSpec(_Model):
    """A tool the model may call; ``parameters`` is a JSON schema object."""

    name: str = Field(min_length=1)
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class SystemBlock(_Model):
    """One block of the system prompt. ``cache=True`` asks for a cache
    breakpoint right after this block (Anthropic ``cache_control``; OpenAI-style
    providers cache prefixes automatically and ignore it)."""

    text: str
    cache: bool = False


class ChatRequest(_Model):
    model: str = Field(min_length=1)
    system: list[SystemBlock] = Field(default_factory=list)
    messages: list[Message] = Field(default_factory=list)
    tools: list[ToolSpec] = Field(default_factory=list)
    max_tokens: int = Field(gt=0)
    temperature: float | None = None
    cache_last_message: bool = True


class TextDelta(_Model):
    type: Literal["text_delta"] = "text_delta"
    text: str


class ToolCallStarted(_Model):
    """A tool call began; ``index`` counts tool calls of this reply from 0."""

    type: Literal["tool_call_started"] = "tool_call_started"
    index: int
    id: str
    name: str


class ToolCallArgsDelta(_Model):
    type: Literal["tool_call_args_delta"] = "tool_call_args_delta"
    index: int
    text: str


class ToolCallDone(_Model):
    type: Literal["tool_call_done"] = "tool_call_done"
    call: ToolCall


class UsageReport(_Model):
    """Token usage of one call. ``input_tokens`` is the whole prompt, cached
    parts included (Anthropic's three-way split is summed here)."""

    type: Literal["usage"] = "usage"
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    cache_creation_tokens: int = 0


class StreamDone(_Model):
    type: Literal["done"] = "done"
    stop_reason: str


ProviderEvent = Annotated[
    TextDelta | ToolCallStarted | ToolCallArgsDelta | ToolCallDone | UsageReport | StreamDone,
    Field(discriminator="type"),
]


class ProviderError(Exception):
    """The only exception a provider raises. Messages are short, human, and
    already stripped of secrets by the client that built them."""

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        status: int | None = None,
        retryable: bool | None = None,
        retry_after: float | None = None,
    ) -> None:
        # the backstop: no key leaves in an error (details were redacted whole before)
        message = redact(message, assignments=False).text
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message
        self.status = status
        self.retryable = kind in RETRYABLE_KINDS if retryable is None else retryable
        self.retry_after = retry_after

    def __str__(self) -> str:
        where = f" HTTP {self.status}" if self.status is not None else ""
        return f"[{self.kind}{where}] {self.message}"

    def __repr__(self) -> str:
        return (
            f"ProviderError(kind={self.kind!r}, status={self.status!r}, "
            f"retryable={self.retryable!r}, message={self.message!r})"
        )

    def with_message(self, message: str) -> ProviderError:
        return ProviderError(
            self.kind,
            message,
            status=self.status,
            retryable=self.retryable,
            retry_after=self.retry_after,
        )


@runtime_checkable
class Provider(Protocol):
    """What the agent layer talks to. ``stream`` is an async generator: iterate
    it (ideally inside ``contextlib.aclosing``); cancelling the consuming task
    closes the HTTP stream."""

    family: str
    model: str

    def stream(self, req: ChatRequest) -> AsyncGenerator[ProviderEvent, None]: ...

    async def aclose(self) -> None: ...
