"""When the provider's prefix cache of a session was last refreshed.

Every model request refreshes the provider's cache of its prefix; the reply
is stored as an assistant message right after, so the newest assistant
message's ``created_at`` (wall clock, persisted: it survives a daemon restart)
is when the cache was last used. The idle time of the next request is ``now``
minus that; the pipeline compares it with the model's cache TTL
(``bonsai.core.context.pricing.Pricing.expired``). The clock is injected so tests can
move it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from bonsai.domain import StoredMessage

Clock = Callable[[], float]
WALL_CLOCK: Clock = time.time


def idle_seconds(history: Sequence[StoredMessage], now: float) -> float | None:
    """Seconds since the session's last model reply (``None``: no reply yet)."""
    last = next((s for s in reversed(history) if s.message.role == "assistant"), None)
    if last is None:
        return None
    return max(0.0, now - last.created_at)
