"""Chat events on the wire are one typed shape per ``kind``: every event a real
turn sends validates against the discriminated union and comes back byte-equal
(the camelCase JSON clients have always read); a shape that lacks a field its
kind always has, or a kind nobody defined, is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args

import pytest
from agent_helpers import call, make_rig
from pydantic import ValidationError

from bonsai.agent.runtime import SessionRuntime
from bonsai.protocol import models as m
from bonsai.sim import Script
from bonsai.sim.faults import Fault
from bonsai.sim.script import Reply

KINDS = {
    "delta",
    "toolCall",
    "toolResult",
    "usage",
    "done",
    "error",
    "notice",
    "retry",
    "cancelled",
}


def parsed(raw: dict[str, Any]) -> m.ChatEventEnvelope:
    event = m.ChatEventParams.model_validate(raw).root
    assert event.dump() == raw, "the typed event writes back exactly what was sent"
    return event


async def test_every_event_of_real_turns_is_its_kinds_member(home: Path, workspace: Path) -> None:
    (workspace / "notes.txt").write_text("tea at four\n")
    script = Script(
        steps=[
            Reply(text="Reading.", tool_calls=[call("read_file", "c1", path="notes.txt")]),
            Reply(text="Tea is at four."),
        ],
        faults={1: Fault(kind="rate_limit", retry_after="1"), 4: Fault(kind="auth")},
    )
    async with make_rig(script, home, workspace) as rig:
        sid = await rig.session()
        _, first = await rig.turn(sid, "when is tea?")
        _, second = await rig.turn(sid, "and coffee?")
    events = [parsed(raw) for raw in first + second]
    by_kind = {e.kind: e for e in events}
    assert set(by_kind) == KINDS - {"notice", "cancelled"}, [
        e.kind for e in events
    ]  # cancel: test_cancelled_event
    call_event = by_kind["toolCall"]
    assert isinstance(call_event, m.ChatToolCallParams)
    assert (call_event.tool_call_id, call_event.name) == ("c1", "read_file")
    assert call_event.args == {"path": "notes.txt"}
    result = by_kind["toolResult"]
    assert isinstance(result, m.ChatToolResultParams)
    assert "tea at four" in result.result and result.is_error is False
    usage = by_kind["usage"]
    assert isinstance(usage, m.ChatUsageParams) and usage.usage.input_tokens > 0
    error = by_kind["error"]
    assert isinstance(error, m.ChatErrorParams) and error.turn_id == second[-1]["turnId"]
    assert [e.seq for e in events] == sorted(e.seq for e in events), "one ordered stream"


def test_the_runtime_stamps_every_kind_for_the_wire() -> None:
    sent: list[m.ChatEventEnvelope] = []
    runtime = SessionRuntime("s1", sent.append)
    bodies: list[m.ChatEvent] = [
        m.DeltaEvent(text="hi"),
        m.ToolCallEvent(tool_call_id="c1", name="bash", args={"command": "ls"}),
        m.ToolResultEvent(tool_call_id="c1", name="bash", result="a.py", is_error=False),
        m.UsageEvent(usage=m.UsageInfo(input_tokens=10, output_tokens=2)),
        m.NoticeEvent(message="this server cannot call tools"),
        m.RetryEvent(text="retrying in 1 s", retry_in_s=1.0, attempt=0),
        m.ErrorEvent(message="provider unreachable"),
        m.CancelledEvent(),
        m.DoneEvent(),
    ]
    for body in bodies:
        runtime.emit("t1", body)
    members = {cls.model_fields["kind"].default for cls in get_args(get_args(m.ChatEventWire)[0])}
    assert {e.kind for e in sent} == members == KINDS, "one union member per kind, all emitted"
    for seq, (body, event) in enumerate(zip(bodies, sent, strict=True), start=1):
        raw = event.dump()
        assert (raw["sessionId"], raw["turnId"], raw["seq"]) == ("s1", "t1", seq)
        assert parsed(raw).model_dump(exclude={"session_id", "turn_id", "seq"}) == body.model_dump()
    assert sent[0].dump() == {
        "sessionId": "s1",
        "turnId": "t1",
        "seq": 1,
        "kind": "delta",
        "text": "hi",
    }


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ({"kind": "toolResult", "toolCallId": "c1", "name": "bash", "result": "x"}, "isError"),
        ({"kind": "delta"}, "text"),
        ({"kind": "delta", "text": "x", "message": "stray"}, "message"),
        ({"kind": "thinking", "text": "x"}, "thinking"),
    ],
)
def test_a_shape_its_kind_does_not_have_is_refused(raw: dict[str, Any], problem: str) -> None:
    envelope = {"sessionId": "s1", "turnId": "t1", "seq": 1}
    with pytest.raises(ValidationError, match=problem):
        m.ChatEventParams.model_validate({**envelope, **raw})
