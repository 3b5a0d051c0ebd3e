"""Loop guards: escalating nudges and a final stop."""

from __future__ import annotations

from ctx_helpers import items_of, user

from bonsai.core.context import ContextState, Guard, loop_guard
from bonsai.domain import Evidence, Message, ToolCall


def _call(n: int, name: str = "bash", args: str = '{"command": "ls"}') -> ToolCall:
    return ToolCall(id=f"c{n}", name=name, arguments=args)


def _history(calls: list[tuple[ToolCall, str, Evidence | None, bool]]) -> list[Message]:
    out: list[Message] = [user("fix the build")]
    for call, text, evidence, error in calls:
        out.append(Message(role="assistant", content="", tool_calls=(call,)))
        out.append(
            Message(
                role="tool", content=text, tool_call_id=call.id, evidence=evidence, is_error=error
            )
        )
    return out


def _run(messages: list[Message], call: ToolCall, state: ContextState) -> Guard:
    return loop_guard(items_of(messages), call, state)


def test_identical_inspections_escalate_to_a_stop() -> None:
    messages: list[Message] = [user("fix the build")]
    state = ContextState()
    levels = []
    for n in range(6):
        guard = _run(
            messages, _call(n, args='{"command":  "ls"}' if n % 2 else '{"command": "ls"}'), state
        )
        levels.append(guard.level)
        state = guard.state
        messages += _history([(_call(n), "a.py", None, False)])[1:]
    assert levels == ["ok", "ok", "nudge", "nudge", "stop", "stop"]


def test_the_stop_message_speaks_to_the_user() -> None:
    messages = _history([(_call(n), "a.py", None, False) for n in range(4)])
    guard = _run(messages, _call(9), ContextState())
    assert guard.level == "stop" and guard.message.startswith("bonsai stopped the turn:")


def test_an_ignored_nudge_escalates() -> None:
    messages = _history([(_call(n), "a.py", None, False) for n in range(2)])
    first = _run(messages, _call(9), ContextState())
    assert first.level == "nudge" and first.message.startswith("[bonsai loop guard]")
    second = _run(messages, _call(9), first.state)  # the same call again, no new information
    assert second.level == "nudge" and "last warning" in second.message
    assert _run(messages, _call(9), second.state).level == "stop"


def test_read_storms_on_one_file_nudge() -> None:
    reads = [
        (
            _call(n, "read_file", f'{{"path": "a.py", "offset": {n}}}'),
            "x",
            Evidence(kind="read", path="a.py"),
            False,
        )
        for n in range(6)
    ]
    guard = _run(
        _history(reads), _call(9, "read_file", '{"path": "a.py", "offset": 99}'), ContextState()
    )
    assert guard.level == "nudge" and "`a.py` was read 6 times" in guard.message


def test_repeated_failures_nudge_then_stop() -> None:
    fails = [
        (_call(n, "bash", f'{{"command": "make {n}"}}'), "error", None, True) for n in range(4)
    ]
    guard = _run(_history(fails), _call(9, "bash", '{"command": "make again"}'), ContextState())
    assert guard.level == "nudge" and "last 4 tool calls all failed" in guard.message
    same = [(_call(n, "bash", '{"command": "make"}'), "error", None, True) for n in range(4)]
    assert (
        _run(_history(same), _call(9, "bash", '{"command": "make"}'), ContextState()).level
        == "stop"
    )


def test_a_stall_without_edits_nudges_once_per_level() -> None:
    calls = [(_call(n, "bash", f'{{"command": "cat f{n}"}}'), "x", None, False) for n in range(25)]
    messages = _history(calls)
    first = _run(messages, _call(99, "bash", '{"command": "cat z"}'), ContextState())
    assert first.level == "nudge" and "25 tool calls this turn without an edit" in first.message
    assert _run(messages, _call(98, "bash", '{"command": "cat y"}'), first.state).level == "ok"


def test_an_edit_or_a_new_user_message_resets() -> None:
    calls = [(_call(n, "bash", f'{{"command": "cat f{n}"}}'), "x", None, False) for n in range(25)]
    calls.append((_call(50, "edit"), "ok", Evidence(kind="edit", path="a.py"), False))
    assert (
        _run(_history(calls), _call(99, "bash", '{"command": "cat z"}'), ContextState()).level
        == "ok"
    )
    messages = [*_history([(_call(n), "a.py", None, False) for n in range(4)]), user("try again")]
    stopped = _run(messages[:-1], _call(9), ContextState())
    assert stopped.level == "stop"
    fresh = _run(messages, _call(9), stopped.state)
    assert fresh.level == "ok" and fresh.state.guard.issued == {}


def test_guard_state_survives_json() -> None:
    messages = _history([(_call(n), "a.py", None, False) for n in range(2)])
    first = _run(messages, _call(9), ContextState())
    restored = ContextState.model_validate_json(first.state.model_dump_json())
    assert (
        _run(messages, _call(9), restored).message == _run(messages, _call(9), first.state).message
    )
