"""Grading a failed turn and the deterministic reflection (pure core)."""

from __future__ import annotations

import json

from bonsai.core.turn.grading import grade_reply, grade_turn, reflection
from bonsai.domain import Message, ToolCall


def bash(call_id: str, command: str) -> Message:
    args = json.dumps({"command": command})
    return Message(
        role="assistant",
        content="",
        tool_calls=(ToolCall(id=call_id, name="bash", arguments=args),),
    )


def result(call_id: str, output: str, code: int, name: str = "bash") -> Message:
    return Message(
        role="tool",
        content=f"{output}\n[exit code {code}]",
        tool_call_id=call_id,
        name=name,
        is_error=code != 0,
    )


FAILING = "tests/test_x.py::test_parse FAILED\nE   assert 3 == 4\n1 failed, 2 passed"


def test_a_last_test_run_that_exits_non_zero_is_graded_with_its_evidence() -> None:
    turn = [
        Message(role="user", content="fix the parser"),
        bash("c1", "pytest -q"),
        result("c1", FAILING, 1),
        Message(role="assistant", content="I fixed it."),
    ]
    grade = grade_turn(turn)
    assert grade is not None and grade.kind == "tests_failing" and grade.severity == "medium"
    assert grade.evidence[0] == "$ pytest -q" and grade.evidence[-1] == "[exit code 1]"
    assert "E   assert 3 == 4" in grade.evidence
    text = reflection(grade)
    assert "assert 3 == 4" in text and "the last test command still failed" in text


def test_tests_that_pass_in_the_end_are_not_a_failure_and_repeated_failures_are_high() -> None:
    fixed = [
        bash("c1", "pytest"),
        result("c1", FAILING, 1),
        bash("c2", "pytest"),
        result("c2", "ok", 0),
    ]
    assert grade_turn(fixed) is None
    twice = [
        bash("c1", "npm test"),
        result("c1", "x", 1),
        bash("c2", "npm test"),
        result("c2", "x", 2),
    ]
    grade = grade_turn(twice)
    assert grade is not None and grade.severity == "high"


def test_tool_errors_at_the_end_count_but_a_declined_call_does_not() -> None:
    errors = [bash("c1", "ls nope"), result("c1", "ls: cannot access 'nope'", 2)]
    grade = grade_turn(errors)
    assert grade is not None and grade.kind == "tool_error" and grade.severity == "low"
    assert grade.evidence == ("bash: ls: cannot access 'nope'",)
    declined = Message(
        role="tool", content="the user did not approve this call", tool_call_id="c1", is_error=True
    )
    assert grade_turn([bash("c1", "rm -rf x"), declined]) is None


def test_the_user_saying_it_is_wrong_is_a_failure_of_the_previous_answer() -> None:
    grade = grade_reply("Thanks.\nThat is wrong, the offset starts at 1.")
    assert grade is not None and grade.kind == "user_rejected"
    assert grade.evidence == ("user: That is wrong, the offset starts at 1.",)
    assert grade_reply("Great, now add a CLI flag.") is None
