"""What a streamed delta looks like on the wire: the short way the broadcast takes for
the event it sends most gives the very bytes of the general way (dump everything,
redact every string, frame), secrets in the text redacted."""

from __future__ import annotations

import pytest

from bonsai.daemon import framing
from bonsai.daemon.state import event_frame
from bonsai.protocol import models as m
from bonsai.services.redaction import redact_value

METHOD = "bonsai/chat/event"


@pytest.mark.parametrize(
    "text",
    [
        "plain words",
        "the key is sk-proj-abcdefghijklmnopqrstuvwx, keep it safe",
        'quotes " and \\ backslashes\nnew lines, ünïcödé and 🙂',
        "control \x00\x1f\x7f characters",
        "",
    ],
)
def test_a_delta_frame_is_byte_equal_to_the_general_frame(text: str) -> None:
    event = m.chat_event_params(m.DeltaEvent(text=text), session_id="s_1", turn_id="t_2", seq=7)
    assert event_frame(METHOD, event) == framing.notification(METHOD, redact_value(event.dump()))


def test_a_secret_in_a_delta_is_redacted() -> None:
    secret = "sk-proj-abcdefghijklmnopqrstuvwx"
    event = m.chat_event_params(
        m.DeltaEvent(text=f"use {secret}"), session_id="s_1", turn_id="t_2", seq=1
    )
    frame = event_frame(METHOD, event)
    assert secret.encode() not in frame and b"[REDACTED]" in frame


def test_ids_are_encoded_as_the_general_frame_encodes_them() -> None:
    event = m.ChatDeltaParams(session_id='s_"1\\', turn_id="t_é", seq=12345678901, text="x")
    assert event_frame(METHOD, event) == framing.notification(METHOD, redact_value(event.dump()))
