"""Injected faults: what can go wrong with a simulated provider call.

* ``rate_limit`` – HTTP 429 (or ``status``) with an optional ``retry-after``;
* ``server_error`` – HTTP 500 (or ``status``, e.g. 529 overloaded);
* ``drop`` – the stream starts, then the socket closes after ``after_events``;
* ``malformed`` – after ``after_events`` events, one SSE data line is not JSON;
* ``slow_first_byte`` – nothing is sent for ``delay_s`` seconds (for timeouts);
* ``stall`` – after ``after_events`` events the stream sends nothing for ``delay_s``
  seconds, its connection open (a provider or proxy hung mid-answer), then goes on;
* ``auth`` – HTTP 401, as if the key were wrong;
* ``html_page`` – an HTML page in place of the API's answer, as a proxy or gateway in
  front of the provider serves one: HTTP 502 (or ``status``; 200 for a proxy's sign-in
  page), ``message`` its title;
* ``stream_error`` – after ``after_events`` events, an error object in the stream
  (``{api_key}`` in ``message`` is replaced by the key the client presented).

A faulted request never consumes a script step: the retry gets the reply.
"""

from __future__ import annotations

import html
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

FaultKind = Literal[
    "rate_limit",
    "server_error",
    "drop",
    "malformed",
    "slow_first_byte",
    "auth",
    "stream_error",
    "html_page",
    "stall",
]

_DEFAULT_STATUS = {"rate_limit": 429, "server_error": 500, "auth": 401, "html_page": 502}
_DEFAULT_MESSAGE = {
    "html_page": "502 Bad Gateway",
    "rate_limit": "Rate limit reached for requests (simulated).",
    "server_error": "The server had an error while processing your request (simulated).",
    "auth": "Invalid API key (simulated).",
}

# A data line that is cut off mid-JSON, as a broken proxy might deliver it.
MALFORMED_FRAME = b'data: {"truncated": \n\n'

# nginx's own error page, the commonest HTML a client meets in place of an API's JSON
_PAGE = """<html>
<head><title>{title}</title></head>
<body>
<center><h1>{title}</h1></center>
<hr><center>nginx/1.25.3</center>
</body>
</html>
"""


class Fault(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: FaultKind
    status: int | None = Field(None, ge=200, le=599)
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

    @property
    def html_page(self) -> bytes:
        """The page an ``html_page`` fault serves."""
        return _PAGE.format(title=html.escape(self.error_message)).encode()
