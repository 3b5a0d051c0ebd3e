"""The frames split as bytes arrive (``framing.FrameSplitter``, what every connection's
``data_received`` uses) are the frames and errors of the stream reader it replaced,
however the bytes are chunked.

The reference is that reader, kept here as it was (``readuntil`` per header line,
``readexactly`` per body, over an ``asyncio.StreamReader`` whose limit is the longest
header line). Streams are made of well-formed frames (CRLF or LF, other headers,
any case), stray blank lines, and broken pieces (a header without a colon, a bad or
oversized length, a frame without a length, a line or a header block too long, an
end inside the headers or a body), then cut into random chunks.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bonsai.daemon.framing import MAX_HEADER_BYTES, FrameError, FrameSplitter, _parse_header

Outcome = tuple[list[bytes], str | None]


# ------------------------------------------------------------------ the reference reader


async def _old_frames(reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
    while True:
        length = await _old_headers(reader)
        if length is None:
            return
        try:
            body = await reader.readexactly(length)
        except asyncio.IncompleteReadError as error:
            raise FrameError(f"stream ended inside a {length}-byte frame") from error
        yield body


async def _old_headers(reader: asyncio.StreamReader) -> int | None:
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
                if seen <= 2:
                    seen = 0
                    continue
                raise FrameError("frame without a Content-Length header")
            return length
        length = _parse_header(text, length)


def old_reader(stream: bytes, limit: int) -> Outcome:
    async def read() -> Outcome:
        reader = asyncio.StreamReader(limit=limit)
        reader.feed_data(stream)
        reader.feed_eof()
        bodies: list[bytes] = []
        try:
            async for body in _old_frames(reader):
                bodies.append(body)
        except FrameError as error:
            return bodies, str(error)
        return bodies, None

    return asyncio.run(read())


def splitter(chunks: list[bytes], limit: int) -> Outcome:
    frames = FrameSplitter(line_limit=limit)
    bodies: list[bytes] = []
    try:
        for chunk in chunks:
            frames.feed(chunk)
            while (body := frames.next()) is not None:
                bodies.append(body)
        frames.end()
    except FrameError as error:
        return bodies, str(error)
    return bodies, None


# ------------------------------------------------------------------ the streams

_BODY = st.binary(max_size=300)
_EOL = st.sampled_from([b"\r\n", b"\n"])
_NAME = st.sampled_from([b"Content-Length", b"content-length", b"CONTENT-LENGTH"])


@st.composite
def good_frame(draw: st.DrawFn) -> bytes:
    body = draw(_BODY)
    eol = draw(_EOL)
    lines = [draw(_NAME) + b": %d" % len(body)]
    if draw(st.booleans()):
        lines.append(b"Content-Type: application/vscode-jsonrpc; charset=utf-8")
    if draw(st.booleans()):
        lines.reverse()
    return b"".join(line + eol for line in lines) + eol + body


_BROKEN = st.sampled_from(
    [
        b"Garbage without a colon\r\n\r\n",
        b"Content-Length: nope\r\n\r\n{}",
        b"Content-Length: -1\r\n\r\n",
        b"Content-Length: 99999999999\r\n\r\n",
        b"X-Other: 1\r\n\r\n{}",
        b"X-Other: 1\r\n",  # the stream may end inside the headers
        b"Content-Length: 50\r\n\r\n{short",  # or inside a body
        b"Content-Length: 3\r\n",
        b"X-Long: " + b"a" * 200 + b"\r\n",  # past a small line limit
        b"X-Pad: " + b"b" * 90 + b"\r\n",  # many of these: past the header block's limit
        b"Content-Length: 2\r\n" + b"X-Pad: " + b"c" * 9000 + b"\r\n\r\n{}",
        b"\r\n",  # a stray blank line (taken between frames)
        b"\n",
        b"\r\r\n",
    ]
)


@st.composite
def stream(draw: st.DrawFn) -> bytes:
    pieces = draw(st.lists(st.one_of(good_frame(), good_frame(), _BROKEN), max_size=12))
    padding = draw(st.integers(0, 100))
    if padding > 90:  # headers of one frame just past MAX_HEADER_BYTES, line by line
        pieces.append(b"X-Pad: " + b"d" * 90 + b"\r\n")
        pieces.extend([b"X-Pad: " + b"d" * 90 + b"\r\n"] * 90)
    data = b"".join(pieces)
    cut = draw(st.integers(0, len(data)))
    return data[:cut] if draw(st.booleans()) else data


@st.composite
def chunked(draw: st.DrawFn) -> tuple[bytes, list[bytes]]:
    data = draw(stream())
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=20)))
    bounds = [0, *cuts, len(data)]
    return data, [data[a:b] for a, b in itertools.pairwise(bounds)]


_RUNS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_RUNS
@given(chunked(), st.sampled_from([2**20, 128]))
def test_any_chunking_gives_the_frames_and_error_of_the_old_reader(
    case: tuple[bytes, list[bytes]], limit: int
) -> None:
    data, chunks = case
    assert splitter(chunks, limit) == old_reader(data, limit)


@_RUNS
@given(chunked())
def test_byte_by_byte_is_the_same_as_all_at_once(case: tuple[bytes, list[bytes]]) -> None:
    data, _ = case
    one_by_one = [data[i : i + 1] for i in range(len(data))]
    assert splitter(one_by_one, 2**20) == splitter([data], 2**20)


def test_a_header_line_past_the_limit_fails_before_its_end_arrives() -> None:
    """The limit holds for a line still arriving: its bytes are not buffered without end."""
    frames = FrameSplitter(line_limit=1000)
    frames.feed(b"X-Endless: ")
    assert frames.next() is None
    frames.feed(b"z" * 1000)
    try:
        frames.next()
    except FrameError as error:
        assert str(error) == "header line too long"
    else:
        raise AssertionError("a 1,011-byte line was taken with a 1,000-byte limit")


def test_frames_in_one_chunk_come_out_one_at_a_time_in_order() -> None:
    frames = FrameSplitter()
    frames.feed(b"Content-Length: 2\r\n\r\n{}Content-Length: 4\r\n\r\n[1,2]")
    assert frames.next() == b"{}"
    assert frames.next() == b"[1,2"
    assert frames.next() is None, "the rest waits for its frame's headers"
    assert frames.buffered == 1
