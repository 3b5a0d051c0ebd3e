"""Backoff arithmetic, retry-after parsing and the retry loop's rules."""

from __future__ import annotations

import random
from collections.abc import AsyncGenerator

import pytest
from provider_helpers import SleepRecorder

from bonsai.services.providers.errors import error_from_status, provider_message
from bonsai.services.providers.retry import (
    RetryPolicy,
    backoff_delay,
    parse_retry_after,
    retrying,
)
from bonsai.services.providers.types import ProviderError

NOW = 1_700_000_000.0


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("3", 3.0),
        (" 1.5 ", 1.5),
        ("-4", 0.0),
        ("Tue, 14 Nov 2023 22:13:30 GMT", 10.0),  # NOW + 10 s
        ("Tue, 14 Nov 2023 22:00:00 GMT", 0.0),  # in the past
        ("soon", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_retry_after(header: str | None, expected: float | None) -> None:
    assert parse_retry_after(header, NOW) == expected


def test_backoff_grows_exponentially_within_jitter_bounds_and_caps() -> None:
    policy = RetryPolicy(base_delay_s=0.5, max_delay_s=4.0)
    rng = random.Random(1)
    for attempt, ceiling in [(0, 0.5), (1, 1.0), (2, 2.0), (3, 4.0), (6, 4.0)]:
        delays = [backoff_delay(policy, attempt, None, rng) for _ in range(50)]
        assert all(ceiling / 2 <= d <= ceiling for d in delays)
        assert len(set(delays)) > 1  # jittered


def test_backoff_uses_the_servers_retry_after_exactly() -> None:
    assert backoff_delay(RetryPolicy(), 3, 7.0, random.Random(0)) == 7.0


class Flaky:
    """An attempt function failing with the given errors, then yielding 'ok'."""

    def __init__(self, *errors: ProviderError, yield_first: bool = False) -> None:
        self.errors = list(errors)
        self.calls = 0
        self.yield_first = yield_first

    async def __call__(self) -> AsyncGenerator[str, None]:
        self.calls += 1
        if self.yield_first:
            yield "partial"
        if self.errors:
            raise self.errors.pop(0)
        yield "ok"


async def drain(gen: AsyncGenerator[str, None]) -> list[str]:
    return [item async for item in gen]


async def test_retryable_errors_are_retried_until_success() -> None:
    sleeps = SleepRecorder()
    flaky = Flaky(ProviderError("server", "boom", status=500), ProviderError("connect", "no"))
    out = await drain(
        retrying(flaky, RetryPolicy(max_retries=3), sleep=sleeps, rng=random.Random(0))
    )
    assert out == ["ok"] and flaky.calls == 3 and len(sleeps.delays) == 2


async def test_giving_up_says_how_many_attempts_were_made() -> None:
    errors = [ProviderError("server", "boom", status=500) for _ in range(5)]
    flaky = Flaky(*errors)
    policy = RetryPolicy(max_retries=2)
    with pytest.raises(ProviderError) as info:
        await drain(retrying(flaky, policy, sleep=SleepRecorder(), rng=random.Random(0)))
    assert info.value.kind == "server" and "gave up after 3 attempts" in info.value.message
    assert flaky.calls == 3


async def test_non_retryable_errors_surface_at_once() -> None:
    flaky = Flaky(ProviderError("bad_request", "nope", status=400))
    with pytest.raises(ProviderError, match="nope"):
        await drain(retrying(flaky, RetryPolicy(), sleep=SleepRecorder(), rng=random.Random(0)))
    assert flaky.calls == 1


async def test_no_retry_once_something_was_delivered() -> None:
    flaky = Flaky(ProviderError("broken_stream", "cut"), yield_first=True)
    seen: list[str] = []
    with pytest.raises(ProviderError, match="cut"):
        async for item in retrying(
            flaky, RetryPolicy(max_retries=5), sleep=SleepRecorder(), rng=random.Random(0)
        ):
            seen.append(item)
    assert seen == ["partial"] and flaky.calls == 1


async def test_a_retry_after_beyond_the_cap_fails_instead_of_waiting() -> None:
    flaky = Flaky(ProviderError("rate_limit", "slow down", status=429, retry_after=600))
    sleeps = SleepRecorder()
    policy = RetryPolicy(retry_after_cap_s=60)
    with pytest.raises(ProviderError, match="asked to wait 600 s"):
        await drain(retrying(flaky, policy, sleep=sleeps, rng=random.Random(0)))
    assert sleeps.delays == []


@pytest.mark.parametrize(
    ("status", "headers", "kind", "wait"),
    [
        (429, {"retry-after": "2", "retry-after-ms": "1500"}, "rate_limit", 1.5),
        (429, {"retry-after": "2", "retry-after-ms": "soon"}, "rate_limit", 2.0),
        (503, {}, "server", None),
        (401, {"retry-after": "5"}, "auth", None),
        (408, {}, "timeout", None),
        (404, {}, "bad_request", None),
    ],
)
def test_status_mapping_and_retry_hints(
    status: int, headers: dict[str, str], kind: str, wait: float | None
) -> None:
    body = b'{"error": {"message": "details here", "type": "some_error"}}'
    err = error_from_status("srv", status, headers, body, secrets=(), now=NOW)
    assert (err.kind, err.status, err.retry_after) == (kind, status, wait)
    assert "details here" in err.message and "some_error" in err.message


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"error": "model not found"}', "model not found"),  # Ollama
        (b'{"detail": "bad field"}', "bad field"),  # vLLM / FastAPI
        (b"<html>gateway</html>", 'HTML page "gateway"'),
        (b"<!DOCTYPE html><title>503 | Cloudflare</title><p>x</p>", 'HTML page "503 | Cloudflare"'),
        (
            b"<html><body><h1>Service\n  Unavailable</h1><script>x()</script>",
            'HTML page "Service Unavailable"',
        ),
        (b"<html><script>var a = 1;</script></html>", "HTML page (no title)"),
        (
            b"upstream connect error\n  or disconnect/reset",
            "upstream connect error or disconnect/reset",
        ),
        (b"", "(empty response body)"),
    ],
)
def test_error_bodies_of_compatible_servers_are_read(body: bytes, expected: str) -> None:
    assert provider_message(body) == expected
