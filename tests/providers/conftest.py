"""Fixtures for provider-client tests: a live simulator on loopback, a sleep
recorder (so retries never wait) and a factory of providers pointed at it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from provider_helpers import MakeProvider, SleepRecorder

from bonsai.services.providers import Provider, make_provider
from bonsai.settings import ProviderSettings
from bonsai.sim import Simulator, run_simulator

DEFAULT_MODEL = {"anthropic": "claude-sonnet-4-5", "deepseek": "deepseek-chat"}


@pytest.fixture
async def sim() -> AsyncIterator[Simulator]:
    async with run_simulator() as running:
        yield running


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()


@pytest.fixture
async def make(sim: Simulator, sleeps: SleepRecorder) -> AsyncIterator[MakeProvider]:
    """``make("anthropic", max_retries=2)``: a provider pointed at the simulator."""
    made: list[Provider] = []

    def build(provider: str = "sim", *, env: dict[str, str] | None = None, **kw: Any) -> Provider:
        kw.setdefault("base_url", sim.base_url if provider == "anthropic" else sim.openai_base_url)
        kw.setdefault("model", DEFAULT_MODEL.get(provider, "gpt-4o-mini"))
        settings = ProviderSettings(provider=provider, **kw)
        keys = {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k", "DEEPSEEK_API_KEY": "k"}
        made.append(make_provider(settings, env=keys if env is None else env, sleep=sleeps))
        return made[-1]

    yield build
    for provider in made:
        await provider.aclose()
