"""The SSE line decoder shared by both clients."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bonsai.services.providers.sse import SseDecoder, SseEvent, iter_sse_text, json_data
from bonsai.services.providers.types import ProviderError


def feed_all(lines: list[str]) -> list[SseEvent]:
    decoder = SseDecoder()
    return [e for line in lines if (e := decoder.feed(line)) is not None]


def test_data_lines_join_with_newlines_and_event_names_apply() -> None:
    events = feed_all(["event: delta", "data: one", "data:two", "", "data: three", ""])
    assert events == [SseEvent("delta", "one\ntwo"), SseEvent("message", "three")]


def test_comments_ids_and_retry_fields_are_ignored() -> None:
    events = feed_all([": keep-alive", "id: 7", "retry: 100", "data: x", ""])
    assert events == [SseEvent("message", "x")]


def test_blank_lines_without_data_dispatch_nothing_and_reset_the_name() -> None:
    events = feed_all(["event: ping", "", "data: after", ""])
    assert events == [SseEvent("message", "after")]


def test_only_one_leading_space_is_stripped_from_a_value() -> None:
    assert feed_all(["data:   indented", ""]) == [SseEvent("message", "  indented")]


async def test_an_event_cut_off_before_its_blank_line_is_dropped() -> None:
    async def pieces() -> AsyncIterator[str]:
        for piece in ["data: complete\n", "\n", "data: partial"]:
            yield piece

    assert [e async for e in iter_sse_text(pieces())] == [SseEvent("message", "complete")]


def test_json_data_names_what_was_wrong() -> None:
    with pytest.raises(ProviderError) as info:
        json_data(SseEvent("message", '{"choices": ['), "openai at example")
    err = info.value
    assert err.kind == "malformed" and not err.retryable
    assert "not JSON" in err.message and "openai at example" in err.message
    assert '{"choices": [' in err.message


def test_json_data_rejects_non_objects() -> None:
    with pytest.raises(ProviderError, match="not an object"):
        json_data(SseEvent("message", "[1, 2]"), "x")


STREAM = (
    "event: delta\r\ndata: one\r\ndata:two\r\n\r\n"
    ': keep-alive\rdata: three\r\rdata: {"t": "a\u2028b"}\n\ndata: cut'
)
EXPECTED = [
    SseEvent("delta", "one\ntwo"),
    SseEvent("message", "three"),
    SseEvent("message", '{"t": "a\u2028b"}'),  # only CR, LF and CRLF end a line
]


def test_text_fed_as_it_arrives_gives_the_events_of_the_lines() -> None:
    decoder = SseDecoder()
    assert decoder.feed_text(STREAM) == EXPECTED


@pytest.mark.parametrize("cut", range(1, len(STREAM)))
def test_a_stream_cut_anywhere_gives_the_same_events(cut: int) -> None:
    decoder = SseDecoder()
    events = decoder.feed_text(STREAM[:cut]) + decoder.feed_text(STREAM[cut:])
    assert events == EXPECTED


def test_a_stream_fed_one_character_at_a_time_gives_the_same_events() -> None:
    decoder = SseDecoder()
    assert [e for ch in STREAM for e in decoder.feed_text(ch)] == EXPECTED


async def test_iter_sse_text_drops_an_event_cut_off_by_the_end() -> None:
    async def pieces() -> AsyncIterator[str]:
        for piece in ["data: comp", "lete\n", "\ndata: partial"]:
            yield piece

    assert [e async for e in iter_sse_text(pieces())] == [SseEvent("message", "complete")]
