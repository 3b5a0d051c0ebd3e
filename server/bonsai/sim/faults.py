"""Injected faults: what can go wrong with a simulated provider call.

* ``rate_limit`` – HTTP 429 (or ``status``) with an optional ``retry-after``;
* ``server_error`` – HTTP 500 (or ``status``, e.g. 529 overloaded);
* ``drop`` – the stream starts, then the socket closes after ``after_events``;
* ``malformed`` – after ``after_events`` events, one SSE data line is not JSON;
* ``slow_first_byte`` – nothing is sent for ``delay_s`` seconds (for timeouts);
* ``auth`` – HTTP 401, as if the key were wrong;
* ``stream_error`` – after ``after_events`` events, an error object in the stream
  (``{api_key}`` in ``message`` is replaced by the key the client presented).

A faulted request never consumes a script step: the retry gets the reply.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

FaultKind = Literal[
    "rate_limit", "server_error", "drop", "malformed", "slow_first_byte", "auth", "stream_error"
]

_DEFAULT_STATUS = {"rate_limit": 429, "server_error": 500, "auth": 401}
_DEFAULT_MESSAGE = {
    "rate_limit": "Rate limit reached for requests (simulated).",
    "server_error": "The server had an error while processing your request (simulated).",
    "auth": "Invalid API key (simulated).",
}

# A data line that is cut off mid-JSON, as a broken proxy might deliver it.
MALFORMED_FRAME = b'data: {"truncated": \n\n'


class Fault(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: FaultKind
    status: int | None = Field(None, ge=400, le=599)
    retry_after: str | None = None  # header value: seconds or an HTTP date
    after_events: int = Field(1, ge=0)
    delay_s: float = Field(5.0, ge=0)
    message: str | None = None

    @property
    def is_http_error(self) -> bool:
        """True when the fault replaces the whole response with an HTTP error."""
        return self.kind in _DEFAULT_STATUS

    @property
    def http_status(self) -> int:
        return self.status or _DEFAULT_STATUS.get(self.kind, 500)

    @property
    def error_message(self) -> str:
        return self.message or _DEFAULT_MESSAGE.get(self.kind, "Simulated failure.")
