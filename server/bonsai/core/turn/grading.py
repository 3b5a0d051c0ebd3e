"""Grading a failed turn and writing the reflection for a retry (design 003, autoReflect).

A turn failed when its last test-like ``bash`` command exited non-zero
(``tests_failing``), when its last tool results were errors (``tool_error``;
a call the user declined is not a failure of the model), or when the user's
next message says the answer was wrong (``user_rejected``). The grade quotes
its evidence from the turn; the deterministic reflection only restates that
evidence, so it never says anything the turn did not show. Pure: no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from bonsai.domain import Message

FailureKind = Literal["tests_failing", "tool_error", "user_rejected"]
Severity = Literal["low", "medium", "high"]

TEST_COMMAND = re.compile(
    r"\b(pytest|py\.test|unittest|tox|nox|jest|vitest|mocha|rspec|phpunit|ctest|tests?)\b",
    re.IGNORECASE,
)
EXIT_LINE = re.compile(r"\[(exit code (-?\d+)|timed out[^\]]*)\]\s*$")
FAILURE_LINE = re.compile(
    r"(FAIL|ERROR|Error|error[:\[]|assert|Traceback|failed|panicked|not ok\b)"
)
REJECTION = re.compile(
    r"\b(wrong|incorrect|not right|doesn'?t work|does not work|didn'?t work|did not work"
    r"|not working|still (fails|failing|broken|fail)|(is|are|it'?s) broken"
    r"|not what i (asked|wanted|meant))\b|^\s*(no|nope)\b[,.!]",
    re.IGNORECASE | re.MULTILINE,
)
DECLINED = ("the user did not approve this call", "denied by the user's tool policy")
MAX_EVIDENCE = 6
LINE_CHARS = 200


@dataclass(frozen=True)
class Grade:
    kind: FailureKind
    severity: Severity
    evidence: tuple[str, ...]


def _clip(line: str) -> str:
    line = line.strip()
    return line if len(line) <= LINE_CHARS else line[: LINE_CHARS - 1] + "…"


def _command(arguments: str) -> str:
    try:
        args = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        return ""
    command = args.get("command") if isinstance(args, dict) else None
    return command if isinstance(command, str) else ""


def _exit_failed(result: Message) -> str | None:
    """The status line of a failed bash result, None when it passed."""
    lines = result.content.rstrip().splitlines()
    status = lines[-1] if lines else ""
    match = EXIT_LINE.search(status)
    if match is None:
        return status if result.is_error else None
    code = match.group(2)
    return None if code == "0" else _clip(status)


def _test_runs(messages: Sequence[Message]) -> list[tuple[str, Message]]:
    commands = {
        call.id: _command(call.arguments)
        for m in messages
        for call in m.tool_calls
        if call.name == "bash"
    }
    return [
        (commands[m.tool_call_id], m)
        for m in messages
        if m.role == "tool"
        and m.tool_call_id in commands
        and TEST_COMMAND.search(commands[m.tool_call_id])
    ]


def _tests_failing(messages: Sequence[Message]) -> Grade | None:
    runs = _test_runs(messages)
    if not runs:
        return None
    command, last = runs[-1]
    status = _exit_failed(last)
    if status is None:
        return None
    failed_in_a_row = 0
    for _, run in reversed(runs):
        if _exit_failed(run) is None:
            break
        failed_in_a_row += 1
    lines = [_clip(x) for x in last.content.splitlines() if FAILURE_LINE.search(x)]
    evidence = (f"$ {_clip(command)}", *lines[-(MAX_EVIDENCE - 2) :], status)
    severity: Severity = "high" if failed_in_a_row >= 2 else "medium"
    return Grade("tests_failing", severity, evidence)


def _tool_errors(messages: Sequence[Message]) -> Grade | None:
    results = [m for m in messages if m.role == "tool"]
    trailing: list[Message] = []
    for result in reversed(results):
        if not result.is_error or any(d in result.content for d in DECLINED):
            break
        trailing.append(result)
    if not trailing:
        return None
    trailing.reverse()
    evidence = tuple(
        f"{r.name or 'tool'}: {_clip(next(iter(r.content.strip().splitlines()), ''))}"
        for r in trailing[-MAX_EVIDENCE:]
    )
    severity: Severity = "high" if len(trailing) >= 3 else "medium" if len(trailing) == 2 else "low"
    return Grade("tool_error", severity, evidence)


def grade_turn(messages: Sequence[Message]) -> Grade | None:
    """The failure of one turn (its messages in log order), or None when it did not fail."""
    return _tests_failing(messages) or _tool_errors(messages)


def grade_reply(user_text: str) -> Grade | None:
    """The user's next message says the previous answer was wrong."""
    match = REJECTION.search(user_text)
    if match is None:
        return None
    start = user_text.rfind("\n", 0, match.start()) + 1
    end = user_text.find("\n", match.end())
    line = user_text[start : end if end >= 0 else None]
    return Grade("user_rejected", "medium", (f"user: {_clip(line)}",))


_LABEL: dict[FailureKind, str] = {
    "tests_failing": "the last test command still failed",
    "tool_error": "it ended on tool errors",
    "user_rejected": "the user said the answer was wrong",
}


def reflection(grade: Grade) -> str:
    """A short deterministic reflection that only restates the evidence."""
    shown = "\n".join(f"  {line}" for line in grade.evidence)
    return (
        f"The previous attempt failed: {_LABEL[grade.kind]} (severity {grade.severity}).\n"
        f"What it showed:\n{shown}\n"
        "Find the cause in this evidence instead of repeating the same approach, "
        "and check the result before finishing."
    )


def reflection_prompt(grade: Grade, question: str) -> str:
    """What the fast model is asked (its answer is followed by the evidence itself)."""
    shown = "\n".join(grade.evidence)
    return (
        "An attempt at the request below failed. In at most three sentences, say what went "
        "wrong and what to do differently. Use only facts visible in the evidence; do not "
        "guess file names, causes or numbers that are not there.\n\n"
        f"Request:\n{question[:2000]}\n\nFailure: {_LABEL[grade.kind]}\nEvidence:\n{shown}"
    )


def with_evidence(text: str, grade: Grade) -> str:
    """A model-written reflection followed by the quoted evidence it is based on."""
    shown = "\n".join(f"  {line}" for line in grade.evidence)
    return f"{text.strip()}\nEvidence:\n{shown}"
