"""LSP base-protocol framing (``Content-Length`` headers) over an asyncio stream.

A broken *frame* (bad header, missing length, oversized body) cannot be
resynchronised, so it ends that connection only. A well-framed body that is
not valid UTF-8 or JSON is a *message* error: it is answered with -32700 and
the connection goes on.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where used: the CLI's client needs only ``encode``
    import asyncio

MAX_FRAME_BYTES = 64 * 1024 * 1024
MAX_HEADER_BYTES = 8 * 1024


class FrameError(Exception):
    """The byte stream is no longer framed correctly; close the connection."""


@dataclass(frozen=True)
class BadMessage:
    """A frame whose body could not be decoded; answer with this error."""

    code: int
    message: str


async def read_frames(reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
    """Yield frame bodies until EOF. Raises FrameError on a broken frame."""
    import asyncio

    while True:
        length = await _read_headers(reader)
        if length is None:
            return
        try:
            body = await reader.readexactly(length)
        except asyncio.IncompleteReadError as error:
            raise FrameError(f"stream ended inside a {length}-byte frame") from error
        yield body


async def _read_headers(reader: asyncio.StreamReader) -> int | None:
    import asyncio

    length: int | None = None
    seen = 0
    while True:
        try:
            line = await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as error:
            if not error.partial and seen == 0:
                return None
            raise FrameError("stream ended inside the frame headers") from error
        except asyncio.LimitOverrunError as error:
            raise FrameError("header line too long") from error
        seen += len(line)
        if seen > MAX_HEADER_BYTES:
            raise FrameError("frame headers too long")
        text = line.rstrip(b"\r\n")
        if not text:
            if length is None:
                if seen <= 2:  # stray blank line between frames
                    seen = 0
                    continue
                raise FrameError("frame without a Content-Length header")
            return length
        length = _parse_header(text, length)


def _parse_header(text: bytes, length: int | None) -> int | None:
    name, sep, value = text.partition(b":")
    if not sep:
        raise FrameError(f"malformed header line {text[:60]!r}")
    if name.strip().lower() != b"content-length":
        return length
    try:
        parsed = int(value.strip())
    except ValueError:
        raise FrameError(f"invalid Content-Length {value.strip()[:20]!r}") from None
    if parsed < 0 or parsed > MAX_FRAME_BYTES:
        raise FrameError(f"Content-Length {parsed} outside 0..{MAX_FRAME_BYTES}")
    return parsed


def decode_body(body: bytes) -> dict[str, Any] | BadMessage:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        return BadMessage(-32700, f"Parse error: body is not valid UTF-8 ({error.reason})")
    try:
        data = json.loads(text)
    except RecursionError:
        return BadMessage(-32700, "Parse error: JSON nested too deeply")
    except json.JSONDecodeError as error:
        return BadMessage(-32700, f"Parse error: {error.msg} at line {error.lineno}")
    if isinstance(data, list):
        return BadMessage(-32600, "Invalid Request: batch messages are not supported")
    if not isinstance(data, dict):
        return BadMessage(-32600, "Invalid Request: a message must be a JSON object")
    return data


# what ``json.dumps(payload, separators=(",", ":"))`` builds at every call, built once
_ENCODER = json.JSONEncoder(separators=(",", ":"))
# the string encoder that encoder uses (C): a delta's frame is filled in around it
_quote = json.encoder.encode_basestring_ascii
_DELTA = (
    '{"jsonrpc":"2.0","method":%s,"params":{"sessionId":%s,"turnId":%s,"seq":%d,'
    '"kind":"delta","text":%s}}'
)


def encode(payload: dict[str, Any]) -> bytes:
    body = _ENCODER.encode(payload).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def notification(method: str, params: Any) -> bytes:
    """One framed notification: encoded once, written as is to every client it goes to."""
    return encode({"jsonrpc": "2.0", "method": method, "params": params})


def delta_notification(method: str, session_id: str, turn_id: str, seq: int, text: str) -> bytes:
    """The frame :func:`notification` gives for a delta event's params (the same keys in
    the same order, the same bytes), without building the dicts and an encoder for them:
    the frame the daemon sends most, once per streamed delta."""
    fields = (_quote(method), _quote(session_id), _quote(turn_id), int(seq), _quote(text))
    body = (_DELTA % fields).encode("ascii")
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
