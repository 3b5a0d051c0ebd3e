"""Server-sent events: a line decoder shared by both clients.

Follows the WHATWG event-stream rules that matter for LLM APIs: ``data:``
lines accumulate (joined by newlines), ``event:`` names the event, a blank line
dispatches, lines starting with ``:`` are comments, and an event that never
saw its blank line is dropped at end of stream.

The clients decode the text as it arrives (``iter_sse_text``): each network read's
text is split into lines at once (CR, LF or CRLF only, as the standard says; a line
cut by a read waits for the rest), not one line at a time through httpx's line
iterator: a streamed reply costs one pass per read instead of several per chunk.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import AsyncGenerator, AsyncIterable
from dataclasses import dataclass, field
from typing import Any

from bonsai.services.providers.types import ProviderError


@dataclass(frozen=True)
class SseEvent:
    event: str
    data: str


@dataclass
class SseDecoder:
    """Feed it lines without their line terminators; it returns complete events."""

    _event: str = ""
    _data: list[str] = field(default_factory=list)

    _carry: str = ""  # text after the last line break fed to ``feed_text``

    def feed_text(self, text: str) -> list[SseEvent]:
        """Feed a piece of the stream as it arrived; the events it completed."""
        text = self._carry + text
        if "\r" in text:
            if text.endswith("\r"):  # may be the first half of a CRLF: wait for the rest
                text, self._carry = text[:-1], "\r"
            else:
                self._carry = ""
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        else:
            self._carry = ""
        *lines, rest = text.split("\n")
        self._carry = rest + self._carry
        events = []
        for line in lines:
            event = self.feed(line)
            if event is not None:
                events.append(event)
        return events

    def feed(self, line: str) -> SseEvent | None:
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        return None  # "id", "retry" and unknown fields are ignored

    def _dispatch(self) -> SseEvent | None:
        if not self._data:
            self._event = ""
            return None
        event = SseEvent(event=self._event or "message", data="\n".join(self._data))
        self._event, self._data = "", []
        return event


async def iter_sse_text(pieces: AsyncIterable[str]) -> AsyncGenerator[SseEvent, None]:
    """The events of a stream read as text pieces (``httpx.Response.aiter_text``)."""
    decoder = SseDecoder()
    async for piece in pieces:
        for event in decoder.feed_text(piece):
            yield event


async def iter_sse_bytes(
    pieces: AsyncIterable[bytes], encoding: str = "utf-8"
) -> AsyncGenerator[SseEvent, None]:
    """The events of a stream read as the bytes that arrived, decoded here as httpx's
    ``aiter_text`` decodes them (incrementally, undecodable bytes replaced): one
    generator between the network and the events instead of four."""
    text = codecs.getincrementaldecoder(encoding)(errors="replace")
    decoder = SseDecoder()
    async for piece in pieces:
        for event in decoder.feed_text(text.decode(piece)):
            yield event
    for event in decoder.feed_text(text.decode(b"", True)):
        yield event


def json_data(event: SseEvent, provider: str) -> dict[str, Any]:
    """Parse an event's data as a JSON object or raise ``malformed`` saying why."""
    try:
        value = json.loads(event.data)
    except json.JSONDecodeError as exc:
        raise ProviderError(
            "malformed",
            f"{provider} sent an SSE data line that is not JSON ({exc.msg} at column "
            f"{exc.colno}): {event.data[:80]!r}",
        ) from None
    if not isinstance(value, dict):
        raise ProviderError(
            "malformed",
            f"{provider} sent SSE data that is JSON but not an object: {event.data[:80]!r}",
        )
    if "\\u" in event.data and _SURROGATE_ESCAPE.search(event.data):
        value = _scrubbed(value)
    return value


# A ``\uD800``-``\uDFFF`` escape in JSON may decode to a lone surrogate (a provider
# cut an emoji's pair, or sent garbage): such a string cannot be encoded as UTF-8,
# so SQLite, redaction and the clients' frames would all fail on it. It becomes
# U+FFFD, the replacement character, where it enters.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")


def _scrubbed(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {key: _scrubbed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_scrubbed(item) for item in value]
    return value
