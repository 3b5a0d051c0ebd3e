"""LSP base-protocol framing (``Content-Length`` headers), split as bytes arrive.

A broken *frame* (bad header, missing length, oversized body) cannot be
resynchronised, so it ends that connection only. A well-framed body that is
not valid UTF-8 or JSON is a *message* error: it is answered with -32700 and
the connection goes on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, cast

MAX_FRAME_BYTES = 64 * 1024 * 1024
MAX_HEADER_BYTES = 8 * 1024


class FrameError(Exception):
    """The byte stream is no longer framed correctly; close the connection."""


@dataclass(frozen=True)
class BadMessage:
    """A frame whose body could not be decoded; answer with this error."""

    code: int
    message: str


# the longest header line taken (as the stream reader this replaced took at most its limit)
LINE_LIMIT = 2**20


class FrameSplitter:
    """Frame bodies split from a byte stream as its bytes arrive, synchronously.

    :meth:`feed` the bytes as they come, in chunks of any size; :meth:`next` gives each
    whole body once it is in, None until more bytes come, or raises :class:`FrameError`
    (after which the splitter is spent); :meth:`end` at the end of the stream raises
    when it ended inside a frame. The rules: header lines end with ``\n`` (``\r\n``
    too), at most ``LINE_LIMIT`` bytes before it and ``MAX_HEADER_BYTES`` for one
    frame's headers; ``Content-Length`` (any case) is required and at most
    ``MAX_FRAME_BYTES``; other headers are skipped; a stray blank line between frames
    is skipped. No task and no await: a connection's ``data_received`` dispatches
    each frame as soon as its last byte is read."""

    __slots__ = ("_body", "_buffer", "_length", "_line_limit", "_seen")

    def __init__(self, line_limit: int = LINE_LIMIT) -> None:
        self._buffer = bytearray()
        self._line_limit = line_limit
        self._length: int | None = None  # the Content-Length of the headers read so far
        self._seen = 0  # bytes of this frame's headers so far
        self._body: int | None = None  # the body's length, once its headers are read

    def feed(self, data: bytes) -> None:
        self._buffer += data

    @property
    def buffered(self) -> int:
        """Bytes received and not yet handed out as a body."""
        return len(self._buffer)

    def next(self) -> bytes | None:
        """The next whole frame's body; None until more bytes come."""
        if self._body is None and not self._headers():
            return None
        length = cast(int, self._body)
        if len(self._buffer) < length:
            return None
        body = bytes(self._buffer[:length])
        del self._buffer[:length]
        self._body = None
        return body

    def end(self) -> None:
        """The stream ended: raises FrameError when it ended inside a frame."""
        if self._body is not None:
            raise FrameError(f"stream ended inside a {self._body}-byte frame")
        if self._buffer or self._seen:
            raise FrameError("stream ended inside the frame headers")

    def _headers(self) -> bool:
        """Read header lines while whole ones are in; True once the blank line ended them."""
        buffer = self._buffer
        while True:
            newline = buffer.find(b"\n")
            if newline < 0:
                if len(buffer) > self._line_limit:
                    raise FrameError("header line too long")
                return False
            if newline > self._line_limit:
                raise FrameError("header line too long")
            line = bytes(buffer[: newline + 1])
            del buffer[: newline + 1]
            self._seen += len(line)
            if self._seen > MAX_HEADER_BYTES:
                raise FrameError("frame headers too long")
            text = line.rstrip(b"\r\n")
            if text:
                self._length = _parse_header(text, self._length)
                continue
            if self._length is None:
                if self._seen <= 2:  # stray blank line between frames
                    self._seen = 0
                    continue
                raise FrameError("frame without a Content-Length header")
            self._body, self._length, self._seen = self._length, None, 0
            return True


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
