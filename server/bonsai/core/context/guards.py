"""Loop guards: escalating nudges, then a hard stop of the turn.

Checked at tool-execution time for the call about to run, against the calls of
the current user turn (everything after the latest user message):

- identical inspection: the same tool with the same arguments again;
- read storm: many reads of one file;
- failing calls: the same call failing again, or a streak of failures;
- stall: many calls without an edit.

Each check maps a count to a level (1 nudge, 2 last warning, 3 stop) and fires
once per level. Repeating an identical or failing call after a warning
escalates one step more, so an ignored nudge becomes a stop. The nudge text is
added to the tool result; a stop ends the turn with ``message`` shown to the user.
"""

from __future__ import annotations

import hashlib
import json
from typing import Literal

from pydantic import BaseModel, ConfigDict

from bonsai.core.context.candidates import failed
from bonsai.core.context.context_state import ContextState, GuardState
from bonsai.core.context.pipeline_types import Item
from bonsai.domain import Message, ToolCall

Level = Literal["ok", "nudge", "stop"]
REPEAT_OFFENCES = ("identical:", "failing:")
PATH_KEYS = ("path", "file_path", "filepath", "filename", "file", "target_file")


class GuardLimits(BaseModel):
    """Counts at which each check reaches nudge, last warning and stop."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    identical: tuple[int, int, int] = (2, 3, 4)  # earlier identical inspections this turn
    storm: tuple[int, int, int] = (6, 9, 12)  # earlier reads of the same file this turn
    failing: tuple[int, int, int] = (2, 3, 4)  # earlier failures of the same call this turn
    streak: tuple[int, int, int] = (4, 6, 8)  # failed results in a row just before this call
    stall: tuple[int, int, int] = (25, 40, 60)  # calls this turn since the last edit


class Guard(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    level: Level
    message: str
    state: ContextState
    key: str | None = None


def _signature(call: ToolCall) -> str:
    try:
        args = json.dumps(json.loads(call.arguments), sort_keys=True)
    except (ValueError, TypeError):
        args = call.arguments.strip()
    return hashlib.sha256(f"{call.name}\x00{args}".encode()).hexdigest()[:12]


def call_path(call: ToolCall) -> str | None:
    try:
        args = json.loads(call.arguments)
    except (ValueError, TypeError):
        return None
    if not isinstance(args, dict):
        return None
    value = next((args[k] for k in PATH_KEYS if isinstance(args.get(k), str)), None)
    return value or None


def _turn_start(items: list[Item]) -> int:
    return next((i.seq for i in reversed(items) if i.message.role == "user"), 0)


def _history(items: list[Item]) -> list[tuple[ToolCall, Message | None]]:
    """This turn's calls with their results (``None`` while unanswered), in order."""
    start = _turn_start(items)
    results = {i.message.tool_call_id: i.message for i in items if i.message.role == "tool"}
    return [
        (call, results.get(call.id))
        for item in items
        if item.seq > start and item.message.role == "assistant"
        for call in item.message.tool_calls
    ]


def _level(count: int, limits: tuple[int, int, int]) -> int:
    return sum(count >= limit for limit in limits)


History = list[tuple[ToolCall, Message | None]]
Check = tuple[str, int, str]  # (key, level, what happened)


def _is_edit(result: Message | None) -> bool:
    ev = result.evidence if result is not None else None
    return ev is not None and ev.kind in ("edit", "write")


def _identical(history: History, call: ToolCall, limits: GuardLimits) -> list[Check]:
    sig = _signature(call)
    same = [r for c, r in history if _signature(c) == sig]
    inspections = sum(1 for r in same if not _is_edit(r))
    fails = sum(1 for r in same if r is not None and failed(r))
    return [
        (
            f"identical:{sig}",
            _level(inspections, limits.identical),
            f"the same {call.name} call ran {inspections} times already this turn",
        ),
        (
            f"failing:{sig}",
            _level(fails, limits.failing),
            f"this {call.name} call already failed {fails} times",
        ),
    ]


def _streak(history: History, limits: GuardLimits) -> list[Check]:
    streak = 0
    for _, result in reversed(history):
        if result is None or not failed(result):
            break
        streak += 1
    return [("streak", _level(streak, limits.streak), f"the last {streak} tool calls all failed")]


def _storm(history: History, call: ToolCall, limits: GuardLimits) -> list[Check]:
    path = call_path(call)
    if not path:
        return []
    reads = sum(
        1
        for _, r in history
        if r and r.evidence and r.evidence.kind == "read" and r.evidence.path == path
    )
    return [
        (f"storm:{path}", _level(reads, limits.storm), f"`{path}` was read {reads} times this turn")
    ]


def _stall(history: History, limits: GuardLimits) -> list[Check]:
    since = 0
    for _, result in reversed(history):
        if _is_edit(result) and result is not None and result.evidence and result.evidence.ok:
            break
        since += 1
    return [("stall", _level(since, limits.stall), f"{since} tool calls this turn without an edit")]


def _checks(history: History, call: ToolCall, limits: GuardLimits) -> list[Check]:
    """The checks that fire for ``call``, as (key, level, what)."""
    out = [
        *_identical(history, call, limits),
        *_streak(history, limits),
        *_storm(history, call, limits),
        *_stall(history, limits),
    ]
    return [c for c in out if c[1] > 0]


NUDGE = "[bonsai loop guard] {what}. Use what you already have, or change approach."
WARN = "[bonsai loop guard, last warning] {what}. If this goes on, bonsai stops the turn."
STOP = (
    "bonsai stopped the turn: {what}. The agent seemed stuck in a loop; "
    "say how to proceed, or ask it to try a different approach."
)


def loop_guard(
    items: list[Item], call: ToolCall, state: ContextState, limits: GuardLimits | None = None
) -> Guard:
    """The guard verdict for ``call`` about to run, and the state with it recorded."""
    limits = limits or GuardLimits()
    start = _turn_start(items)
    guard = state.guard if state.guard.since_seq == start else GuardState(since_seq=start)
    best: tuple[str, int, str] | None = None
    for key, level, what in _checks(_history(items), call, limits):
        given = guard.issued.get(key, 0)
        if key.startswith(REPEAT_OFFENCES) and given:
            level = min(3, max(level, given + 1))  # the same call again after a warning
        elif level <= given:
            continue  # already told at this level
        if best is None or level > best[1]:
            best = (key, level, what)
    if best is None:
        new_state = state if guard is state.guard else state.model_copy(update={"guard": guard})
        return Guard(level="ok", message="", state=new_state)
    key, level, what = best
    issued = {**guard.issued, key: level}
    new_state = state.model_copy(update={"guard": GuardState(since_seq=start, issued=issued)})
    if level >= 3:
        return Guard(level="stop", message=STOP.format(what=what), state=new_state, key=key)
    text = (NUDGE if level == 1 else WARN).format(what=what)
    return Guard(level="nudge", message=text, state=new_state, key=key)
