"""Deltas that arrive together go out together: the runtime joins the deltas a turn
emits in one step of the event loop into one ``delta`` event, published at the end of
that step, so a busy daemon sends fewer, larger events instead of queueing them,
an idle one sends each delta as soon as the step ends, and the stream a client
reads is the same text, in the same order, with contiguous sequence numbers."""

from __future__ import annotations

import asyncio

from bonsai.agent.runtime import SessionRuntime
from bonsai.protocol import models as m


def _runtime() -> tuple[SessionRuntime, list[m.ChatEventWire]]:
    sent: list[m.ChatEventWire] = []
    return SessionRuntime("s1", sent.append), sent


def _kinds(sent: list[m.ChatEventWire]) -> list[tuple[str, str]]:
    return [(e.kind, getattr(e, "text", "")) for e in sent]


async def test_deltas_of_one_loop_step_go_out_as_one_event_at_its_end() -> None:
    rt, sent = _runtime()
    for piece in ("Hel", "lo, ", "world"):
        rt.emit("t1", m.DeltaEvent(text=piece))
    assert sent == [], "held until the step ends"
    await asyncio.sleep(0)
    assert _kinds(sent) == [("delta", "Hello, world")]
    assert [e.seq for e in sent] == [1]


async def test_a_delta_alone_is_sent_when_its_step_ends() -> None:
    rt, sent = _runtime()
    rt.emit("t1", m.DeltaEvent(text="one"))
    await asyncio.sleep(0)
    rt.emit("t1", m.DeltaEvent(text="two"))
    await asyncio.sleep(0)
    assert _kinds(sent) == [("delta", "one"), ("delta", "two")], "no wait beyond the step"
    assert [e.seq for e in sent] == [1, 2]


async def test_any_other_event_sends_the_deltas_before_it_first() -> None:
    rt, sent = _runtime()
    rt.emit("t1", m.DeltaEvent(text="Let me look. "))
    rt.emit("t1", m.DeltaEvent(text="Running ls."))
    rt.emit("t1", m.ToolCallEvent(tool_call_id="c1", name="bash", args={"command": "ls"}))
    rt.emit("t1", m.DeltaEvent(text="Done"))
    rt.emit("t1", m.DoneEvent())
    assert _kinds(sent) == [
        ("delta", "Let me look. Running ls."),
        ("toolCall", ""),
        ("delta", "Done"),
        ("done", ""),
    ]
    assert [e.seq for e in sent] == [1, 2, 3, 4]
    await asyncio.sleep(0)
    assert len(sent) == 4, "nothing is sent twice"


async def test_deltas_of_two_turns_are_never_joined() -> None:
    rt, sent = _runtime()
    rt.emit("t1", m.DeltaEvent(text="end of one"))
    rt.emit("t2", m.DeltaEvent(text="start of two"))
    await asyncio.sleep(0)
    assert [(e.turn_id, e.text) for e in sent if isinstance(e, m.ChatDeltaParams)] == [
        ("t1", "end of one"),
        ("t2", "start of two"),
    ]


async def test_a_client_catching_up_gets_the_joined_deltas_once() -> None:
    rt, sent = _runtime()
    rt.running = "t1"
    rt.emit("t1", m.DeltaEvent(text="a"))
    rt.emit("t1", m.DeltaEvent(text="b"))
    assert rt.catch_up() == [], "not sent yet, so not caught up yet: it comes with the step"
    await asyncio.sleep(0)
    assert [e.dump() for e in rt.catch_up()] == [e.dump() for e in sent]
    assert _kinds(rt.catch_up()) == [("delta", "ab")]


def test_without_a_running_loop_each_delta_is_sent_at_once() -> None:
    rt, sent = _runtime()
    rt.emit("t1", m.DeltaEvent(text="x"))
    assert _kinds(sent) == [("delta", "x")]
