"""Pairing tool results with the calls they answer, after an importer is done.

Recorded sessions reuse tool-call ids (SWE-agent replays do) and sometimes carry
results that answer nothing. ``link_tool_results`` makes every call id unique
(a reused id gets a ``~2``, ``~3`` … suffix, and the result that follows it is
renamed to match), pairs each result with the oldest unanswered call of its id,
and warns about results that answer no call (they are kept as tool results)
and about calls left unanswered anywhere but in the last assistant message.
"""

from __future__ import annotations

from dataclasses import dataclass

from bonsai.domain import Message, ToolCall


@dataclass
class _Pending:
    new_id: str
    index: int
    name: str


def link_tool_results(messages: list[Message], source: str, warnings: list[str]) -> list[Message]:
    seen: set[str] = set()
    pending: dict[str, list[_Pending]] = {}
    out: list[Message] = []
    for index, message in enumerate(messages):
        if message.role == "assistant" and message.tool_calls:
            message = _unique_calls(message, index, seen, pending, source, warnings)
        elif message.role == "tool":
            message = _answer(message, index, pending, source, warnings)
        out.append(message)
    _warn_unanswered(out, pending, source, warnings)
    return out


def _unique_calls(
    message: Message,
    index: int,
    seen: set[str],
    pending: dict[str, list[_Pending]],
    source: str,
    warnings: list[str],
) -> Message:
    calls: list[ToolCall] = []
    for call in message.tool_calls:
        original = call.id
        new_id = original
        suffix = 2
        while new_id in seen:
            new_id = f"{call.id}~{suffix}"
            suffix += 1
        if new_id != call.id:
            warnings.append(
                f"{source}: message {index} reuses tool call id {call.id!r}; renamed {new_id!r}"
            )
            call = call.model_copy(update={"id": new_id})
        seen.add(new_id)
        pending.setdefault(original, []).append(_Pending(new_id, index, call.name))
        calls.append(call)
    if all(a is b for a, b in zip(calls, message.tool_calls, strict=True)):
        return message  # nothing renamed: no copy
    return message.model_copy(update={"tool_calls": tuple(calls)})


def _answer(
    message: Message,
    index: int,
    pending: dict[str, list[_Pending]],
    source: str,
    warnings: list[str],
) -> Message:
    call_id = message.tool_call_id
    queue = pending.get(call_id or "")
    if not queue:
        warnings.append(
            f"{source}: tool result at message {index} (id {call_id!r}) answers no earlier "
            "call; kept as a tool result"
        )
        return message
    waiting = queue.pop(0)
    update: dict[str, object] = {}
    if waiting.new_id != call_id:
        update["tool_call_id"] = waiting.new_id
    if message.name is None:
        update["name"] = waiting.name
    return message.model_copy(update=update) if update else message


def _warn_unanswered(
    messages: list[Message], pending: dict[str, list[_Pending]], source: str, warnings: list[str]
) -> None:
    last = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=-1)
    left = sorted(
        (p for queue in pending.values() for p in queue if p.index != last),
        key=lambda p: (p.index, p.new_id),
    )
    for p in left:
        warnings.append(
            f"{source}: tool call {p.new_id!r} ({p.name}) at message {p.index} has no result"
        )
