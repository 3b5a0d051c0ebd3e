"""The task statement stays protected when the harness writes notes in the user role.

mini-swe-agent answers a reply without exactly one action with a format-error
notice in the user role; two of them used to push the task statement out of the
protected latest user messages (``keep_user_messages`` = 2), so a fold could
swallow the task. Built on small constructed sessions whose answer is known.
"""

from __future__ import annotations

from ctx_helpers import items_of, make_input, step, user

from bonsai.core.context import apply_compaction, plan_compaction
from bonsai.core.context.harness import is_harness_note, person_messages
from bonsai.domain import Message
from bonsai.settings import ContextSettings

TASK = "Please solve this issue: the parser drops trailing commas in tuples. " * 4
FORMAT_ERROR = (
    "Please always provide EXACTLY ONE action in triple backticks, found 2 actions.\n\n"
    "Please format your action in triple backticks as shown in <response_example>."
)
KNOBS = ContextSettings(summary_mode="deterministic")


def _two_format_errors_then_work() -> list[Message]:
    messages = [user(TASK)]
    messages += step(0, "listing " + "a" * 1_200, path="src/a.py")
    for n in (1, 2):  # replies with two actions: no call, and the harness's notice
        messages.append(Message(role="assistant", content=f"Two actions {n}. " + "t" * 400))
        messages.append(user(FORMAT_ERROR))
    for n in range(3, 12):
        messages += step(n, f"out{n} " + "x" * 1_200, path=f"src/p{n}.py")
    return messages


def test_a_fold_after_two_format_error_notes_keeps_the_task_statement_whole() -> None:
    items = items_of(_two_format_errors_then_work())
    inp = make_input(items, settings=KNOBS)
    plan = plan_compaction(inp, target=6_000, mode="deterministic")
    assert plan.fold, "the session is long enough that the oldest groups fold"
    result = apply_compaction(inp, plan, None)
    assert result.messages[0] == items[0].message  # the task, verbatim, still sent
    summary = result.state.summary
    assert summary is not None and items[0].id not in summary.folded
    assert all(i.id in summary.folded for i in items if i.message.content == FORMAT_ERROR)


def test_the_summary_goal_is_the_task_not_the_harness_notice() -> None:
    items = items_of(_two_format_errors_then_work())
    inp = make_input(items, settings=KNOBS)
    result = apply_compaction(inp, plan_compaction(inp, target=6_000, mode="deterministic"), None)
    summary = result.state.summary
    assert summary is not None
    assert "EXACTLY ONE action" not in summary.text
    assert "(the latest user message, sent in full)" in summary.text


def test_a_second_real_request_still_displaces_the_oldest_one() -> None:
    # the person's own messages keep the old rule: the two latest are protected
    messages = [user("First: port the lexer."), *step(0, "l" * 1_200, path="src/l.py")]
    messages += [user("Second: port the parser."), *step(1, "p" * 1_200, path="src/p.py")]
    messages += [user("Third: the tests."), *step(2, "t" * 1_200, path="src/t.py")]
    for n in range(3, 9):
        messages += step(n, f"out{n} " + "x" * 1_200, path=f"src/q{n}.py")
    knobs = ContextSettings(summary_mode="deterministic", min_stub_tokens=10**9)
    items = items_of(messages)
    inp = make_input(items, settings=knobs)
    result = apply_compaction(inp, plan_compaction(inp, target=3_000, mode="deterministic"), None)
    summary = result.state.summary
    assert summary is not None and items[0].id in summary.folded
    assert "task: First: port the lexer." in summary.text  # quoted, as a folded task is


def test_harness_notes_are_told_from_the_persons_words() -> None:
    assert is_harness_note(FORMAT_ERROR)
    assert is_harness_note("Parameter 'command' is expected to be one of ['view', 'create'].")
    assert is_harness_note("Please continue working on the task on whatever approach you think")
    assert not is_harness_note("Fix the bug. Please always provide EXACTLY ONE action, as told.")
    assert not is_harness_note("please add a test for the parser")
    assert is_harness_note("Your output was not formatted correctly. You must always include")
    assert not is_harness_note("Your response did not fix the bug: the test still fails.")
    # the first user message is the task, whatever it says
    items = items_of([user(FORMAT_ERROR), *step(0, "x"), user(FORMAT_ERROR), user("Go on.")])
    assert [i.id for i in person_messages(items)] == ["m1", "m5"]
