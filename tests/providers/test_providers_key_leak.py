"""The API key never shows up in an error's str/repr/traceback or in any log
line, for every error kind, even when the server echoes the key back."""

from __future__ import annotations

import asyncio
import logging
import socket
import traceback
from collections.abc import Awaitable, Callable

import pytest
from provider_helpers import FAKE_KEY, SleepRecorder, request

from bonsai.domain import Message
from bonsai.services.providers import Provider, ProviderError, make_provider
from bonsai.settings import ProviderSettings
from bonsai.sim import Fault, Reply, Rule, Script, Simulator

Trigger = Callable[[Simulator], Awaitable[ProviderError]]


def provider_for(sim: Simulator, **kw: object) -> Provider:
    settings = ProviderSettings.model_validate(
        {
            "provider": "openai",
            "model": "gpt-4o",
            "base_url": sim.openai_base_url,
            "api_key": FAKE_KEY,
            "max_retries": 1,
        }
        | kw
    )
    return make_provider(settings, env={}, sleep=SleepRecorder())


async def run(provider: Provider, *messages: Message) -> ProviderError:
    try:
        async for _ in provider.stream(request("gpt-4o", *messages)):
            if provider.model == "cancel-me":
                await provider.aclose()
    except ProviderError as err:
        return err
    finally:
        await provider.aclose()
    raise AssertionError("expected a ProviderError")


def faulted(fault: Fault, **kw: object) -> Trigger:
    async def trigger(sim: Simulator) -> ProviderError:
        sim.set_script(
            Script(steps=[Reply(text="a b c d e f g")], rules=[Rule(match="", fault=fault)])
        )
        return await run(provider_for(sim, **kw))

    return trigger


async def wrong_key(sim: Simulator) -> ProviderError:
    sim.set_script(Script(require_api_key="another-key"))  # the 401 body echoes our key
    return await run(provider_for(sim))


async def unreachable(sim: Simulator) -> ProviderError:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return await run(provider_for(sim, base_url=f"http://127.0.0.1:{port}/v1"))


async def bad_request(sim: Simulator) -> ProviderError:
    return await run(provider_for(sim), Message(role="tool", tool_call_id="nope", content="x"))


async def cancelled(sim: Simulator) -> ProviderError:
    sim.set_script(Script(steps=[Reply(text="a b c d e f g")], latency_ms=10))
    return await run(provider_for(sim, model="cancel-me"))


TRIGGERS: dict[str, Trigger] = {
    "rate_limit": faulted(Fault(kind="rate_limit", retry_after="1")),
    "server": faulted(Fault(kind="server_error")),
    "timeout": faulted(Fault(kind="slow_first_byte", delay_s=3), read_timeout_s=0.1),
    "connect": unreachable,
    "broken_stream": faulted(Fault(kind="drop", after_events=3)),
    "malformed": faulted(Fault(kind="malformed", after_events=2)),
    "auth": wrong_key,
    "bad_request": bad_request,
    "cancelled": cancelled,
}


@pytest.mark.parametrize("kind", list(TRIGGERS))
async def test_key_is_absent_everywhere(
    kind: str, sim: Simulator, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)  # httpx and httpcore debug logging included
    err = await TRIGGERS[kind](sim)
    assert err.kind == kind
    rendered = [
        str(err),
        repr(err),
        err.message,
        "".join(traceback.format_exception(err)),
        caplog.text,
    ]
    for text in rendered:
        assert FAKE_KEY not in text
        assert FAKE_KEY[8:20] not in text  # not even a fragment
    if kind == "auth":
        assert "[REDACTED]" in err.message  # the echoed key was there, and was masked


def test_provider_repr_and_settings_do_not_show_the_key() -> None:
    settings = ProviderSettings(provider="openai", api_key=FAKE_KEY)  # type: ignore[arg-type]
    provider = make_provider(settings, env={})
    assert FAKE_KEY not in repr(provider) and FAKE_KEY not in repr(settings)
    asyncio.run(provider.aclose())
