"""Cache expiry in the replay: from the recording's timestamps, or the pause model."""

from __future__ import annotations

from bonsai.core.context import Item
from bonsai.domain import Evidence, Message, ToolCall
from bonsai.services.replay import build_config, replay_steps, source_from_messages
from bonsai.services.replay.billing import PauseModel, call_idles
from bonsai.services.replay.runner import ReplayConfig

BODY = "\n".join(f"    value_{n} = compute({n})  # line {n}" for n in range(120))


def _session() -> list[Message]:
    """A task, a read of app.py, six small steps, a second read of app.py (the first
    is superseded), more small steps: well below any trigger."""
    messages = [Message(role="user", content="Tidy app.py.")]
    plan = [("read_file", "app.py"), *(("bash", f"ls d{n}") for n in range(6))]
    plan += [("read_file", "app.py"), *(("bash", f"ls e{n}") for n in range(4))]
    for n, (name, arg) in enumerate(plan):
        call = ToolCall(id=f"c{n}", name=name, arguments=f'{{"arg": "{arg}"}}')
        read = name == "read_file"
        evidence = Evidence(kind="read", path="app.py") if read else None
        messages.append(Message(role="assistant", content=f"Step {n}.", tool_calls=(call,)))
        output = BODY if read else f"d{n}: one file"
        messages.append(
            Message(role="tool", content=output, tool_call_id=call.id, name=name, evidence=evidence)
        )
    messages.append(Message(role="assistant", content="Done."))
    return messages


def _times(messages: list[Message], pause_before: int) -> list[float | None]:
    """20 s per message, and a 10-minute pause before message ``pause_before``."""
    out: list[float | None] = []
    now = 1_700_000_000.0
    for n in range(len(messages)):
        now += 600.0 if n == pause_before else 20.0
        out.append(now)
    return out


def _config() -> ReplayConfig:
    return build_config(window=32_000)


def test_a_pause_in_the_timestamps_expires_the_cache_and_takes_the_deferred_stub() -> None:
    messages = _session()
    second_read = next(
        n for n, m in enumerate(messages) if m.role == "assistant" and "Step 10" in m.content
    )
    source = source_from_messages(messages, times=_times(messages, second_read + 3))
    rows = replay_steps(source, _config())
    assert {r.timing for r in rows} == {"recording timestamps"}
    expired = [r for r in rows if any(e.startswith("expiry:") for e in r.turn.events)]
    assert len(expired) == 1
    row = expired[0]
    assert row.bill is not None and row.bill.idle is not None and row.bill.idle > 300
    assert "m3" in row.assembly.state.stubs  # the superseded first read of app.py
    assert row.turn.cached_input_tokens == 0 and row.raw_cached == 0  # both sides pay in full
    before = rows[rows.index(row) - 1]
    assert before.turn.cached_input_tokens > 0 and "m3" not in before.assembly.state.stubs


def test_without_a_pause_nothing_expires_and_the_read_stays() -> None:
    messages = _session()
    source = source_from_messages(messages, times=_times(messages, -1))
    rows = replay_steps(source, _config())
    assert not any(e.startswith("expiry:") for r in rows for e in r.turn.events)
    assert all("m3" not in r.assembly.state.stubs for r in rows)


def test_without_timestamps_the_pause_model_decides_and_is_stated() -> None:
    messages = [
        Message(role="user", content="one"),
        Message(role="assistant", content="Answer one."),
        Message(role="user", content="two"),
        Message(role="assistant", content="Reading.", tool_calls=(ToolCall(id="c", name="ls"),)),
        Message(role="tool", content="a b", tool_call_id="c", name="ls"),
        Message(role="assistant", content="Answer two."),
    ]
    items = [Item(id=f"m{n}", seq=n, turn=1, message=m) for n, m in enumerate(messages)]
    steps = [1, 3, 5]
    person = PauseModel(step_seconds=20, user_seconds=900)
    idles, how = call_idles(items, steps, None, person)
    assert idles == [None, 900, 20]  # a person answered the first reply; then a tool step
    assert (
        how
        == "pause model: 20 s between agent steps, 900 s after the agent ends its turn and the user writes"
    )
    assert call_idles(items, steps, [1.0, None, 3.0, 4.0, 5.0, 6.0], person)[1] == how
