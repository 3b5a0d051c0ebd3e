"""Retries with exponential backoff and jitter, honouring ``retry-after``.

A call is retried only while nothing has reached the caller: once one event
has been yielded, a failure surfaces as it is (replaying would duplicate text).
Sleeping goes through an injectable function so tests never wait.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing
from email.utils import parsedate_to_datetime
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field

from bonsai.services.providers.types import ProviderError

log = logging.getLogger("bonsai.providers")

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]
# Told before each backoff: the error, the delay in seconds, the retry's number (1-based).
OnRetry = Callable[[ProviderError, float, int], None]


class RetryPolicy(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    max_retries: int = Field(4, ge=0)
    base_delay_s: float = Field(0.5, ge=0)
    max_delay_s: float = Field(20.0, ge=0)
    retry_after_cap_s: float = Field(60.0, ge=0)


def parse_retry_after(value: str | None, now: float) -> float | None:
    """Seconds to wait from a ``retry-after`` header (delta-seconds or HTTP date)."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now)


def backoff_delay(
    policy: RetryPolicy, attempt: int, retry_after: float | None, rng: random.Random
) -> float:
    """Delay before retry number ``attempt`` (0-based): the server's wish if it
    stated one, else capped exponential backoff with equal jitter."""
    if retry_after is not None:
        return retry_after
    ceiling = min(policy.max_delay_s, policy.base_delay_s * (2**attempt))
    return ceiling / 2 + rng.random() * ceiling / 2


def _give_up(err: ProviderError, attempts: int, policy: RetryPolicy) -> ProviderError | None:
    """The error to raise now, or None when another attempt is allowed."""
    if not err.retryable:
        return err
    if err.retry_after is not None and err.retry_after > policy.retry_after_cap_s:
        return err.with_message(
            f"{err.message} (provider asked to wait {err.retry_after:.0f} s, more than "
            f"retry_after_cap_s={policy.retry_after_cap_s:.0f})"
        )
    if attempts > policy.max_retries:
        if policy.max_retries == 0:
            return err
        return err.with_message(f"{err.message} (gave up after {attempts} attempts)")
    return None


async def retrying(
    attempt: Callable[[], AsyncGenerator[T, None]],
    policy: RetryPolicy,
    *,
    sleep: Sleep,
    rng: random.Random,
    on_retry: OnRetry | None = None,
) -> AsyncGenerator[T, None]:
    """Run ``attempt()`` and re-run it on retryable errors raised before its first item."""
    attempts = 0
    while True:
        attempts += 1
        delivered = False
        try:
            async with aclosing(attempt()) as items:
                async for item in items:
                    delivered = True
                    yield item
            return
        except ProviderError as err:
            final = err if delivered else _give_up(err, attempts, policy)
            if final is not None:
                raise final from None
            delay = backoff_delay(policy, attempts - 1, err.retry_after, rng)
            log.warning("%s; retry %d/%d in %.2f s", err, attempts, policy.max_retries, delay)
            if on_retry is not None:
                on_retry(err, delay, attempts)
            await sleep(delay)


def wall_clock() -> float:
    return time.time()
