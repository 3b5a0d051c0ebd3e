"""What a client shows while the provider backs off: a ``retry`` chat event
("retrying in 8 s (rate limited)"), sent before each wait so the user knows why
nothing streams. The next delta, done or error ends it."""

from __future__ import annotations

from collections.abc import Callable

from bonsai.protocol import models as m
from bonsai.services.providers.retry import OnRetry
from bonsai.services.providers.types import ProviderError

REASONS = {
    "rate_limit": "rate limited",
    "server": "the provider had a server error",
    "timeout": "the request timed out",
    "connect": "the connection failed",
    "broken_stream": "the stream broke off",
}


def retry_text(err: ProviderError, delay: float, attempt: int) -> str:
    reason = REASONS.get(err.kind, err.kind.replace("_", " "))
    seconds = f"{delay:.0f} s" if delay >= 1 else f"{delay:.1f} s"
    return f"retrying in {seconds} ({reason}; attempt {attempt + 1})"


def retry_notice(emit: Callable[[m.ChatEvent], None]) -> OnRetry:
    def told(err: ProviderError, delay: float, attempt: int) -> None:
        text = retry_text(err, delay, attempt)
        emit(m.RetryEvent(text=text, retry_in_s=round(delay, 2), attempt=attempt))

    return told
