"""Helpers shared by the provider tests (imported by name; no package)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import aclosing
from typing import Any

from bonsai.domain import Message
from bonsai.services.providers import ChatRequest, Provider, ProviderEvent

FAKE_KEY = "sk-test-0123456789abcdefSECRET"
MakeProvider = Callable[..., Provider]  # the ``make`` fixture's type


class SleepRecorder:
    """Stands in for ``asyncio.sleep`` in the retry loop and remembers each delay."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


async def collect(provider: Provider, req: ChatRequest) -> list[ProviderEvent]:
    async with aclosing(provider.stream(req)) as events:
        return [event async for event in events]


def request(model: str, *messages: Message, **kw: Any) -> ChatRequest:
    msgs = messages or (Message(role="user", content="hello"),)
    return ChatRequest(model=model, messages=list(msgs), max_tokens=kw.pop("max_tokens", 256), **kw)


def text_of(events: list[ProviderEvent]) -> str:
    return "".join(e.text for e in events if e.type == "text_delta")


def of_type(events: list[ProviderEvent], kind: str) -> list[Any]:
    return [e for e in events if e.type == kind]
