"""OpenHands output JSONL: one run a line, each with a ``history[]`` of events.

Actions become assistant messages with a tool call; when an action carries
``tool_call_metadata`` the assistant text and the call (id, name, arguments)
come byte for byte from the recorded model response, and several calls of one
response share one assistant message. Otherwise the call is synthesised as
``oh-<event id>`` (``oh-<index>`` when events have no ids) named after the
action, its arguments the action's ``args`` minus bookkeeping keys.
Observations answer the action their ``cause`` names (or, in the old flat
format without ids, the oldest unanswered action); an observation that answers
no action (an ``error`` for an invalid tool call) becomes a user message.
"""

from __future__ import annotations

from typing import Any

from bonsai.domain import Message
from bonsai.services.importers.common import check_run, task_title, title_from
from bonsai.services.importers.jsonread import Loc, as_dict, as_list, load_json, load_jsonl
from bonsai.services.importers.linking import link_tool_results
from bonsai.services.importers.model import ImportedSession
from bonsai.services.importers.openhands_events import EventState, convert_event
from bonsai.services.importers.stamps import Stamps, record_time


def parse(text: str, source: str, run: int = 0) -> ImportedSession:
    if text.lstrip().startswith("["):
        return _event_stream(load_json(text, source), Loc(source), source, run, [])
    lines = load_jsonl(text, source)
    rows = lines.rows
    warnings: list[str] = []
    lines.report(warnings)
    if rows and all(_is_event(value) for _, value in rows):
        return _event_stream([v for _, v in rows], Loc(source), source, run, warnings)
    for line, value in rows:
        as_dict(value, Loc(source, line), "$")
    check_run(run, len(rows), source)
    line, value = rows[run]
    loc = Loc(source, line)
    record = as_dict(value, loc, "$")
    state = EventState(loc, warnings)
    stamps = Stamps()
    for path, event in _events(as_list(record.get("history"), loc, "history"), loc):
        stamps.record(state.messages, record_time(event))
        convert_event(event, path, state)
    messages = link_tool_results(state.messages, f"{source}:{line}", warnings)
    patch = (
        record.get("test_result", {}).get("git_patch")
        if isinstance(record.get("test_result"), dict)
        else record.get("git_patch")
    )
    return ImportedSession(
        format="openhands",
        title=_title(record, messages, source),
        outcome=patch if isinstance(patch, str) else None,
        messages=messages,
        runs=len(rows),
        run=run,
        source=source,
        warnings=warnings,
        times=stamps.result(messages),
    )


def _is_event(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and "history" not in value
        and ("action" in value or "observation" in value)
    )


def _event_stream(
    events: Any, loc: Loc, source: str, run: int, warnings: list[str]
) -> ImportedSession:
    """One session's event stream (an exported trajectory, or events one a line);
    ``warnings`` holds what reading the file already found (a cut last line)."""
    check_run(run, 1, source)
    state = EventState(loc, warnings)
    stamps = Stamps()
    for path, event in _events(as_list(events, loc, "$"), loc):
        stamps.record(state.messages, record_time(event))
        convert_event(event, path, state)
    if not state.messages:
        raise loc.error("$", "the event stream holds no message to import")
    messages = link_tool_results(state.messages, source, warnings)
    return ImportedSession(
        format="openhands",
        title=title_from(messages, source),
        messages=messages,
        runs=1,
        source=source,
        warnings=warnings,
        times=stamps.result(messages),
    )


def _events(history: list[Any], loc: Loc) -> list[tuple[str, dict[str, Any]]]:
    """Events in order; very old files store ``[action, observation]`` pairs."""
    events: list[tuple[str, dict[str, Any]]] = []
    for index, item in enumerate(history):
        path = f"history[{index}]"
        if isinstance(item, list):
            events.extend(
                (f"{path}[{j}]", as_dict(e, loc, f"{path}[{j}]")) for j, e in enumerate(item)
            )
        else:
            events.append((path, as_dict(item, loc, path)))
    return events


def _title(record: dict[str, Any], messages: list[Message], source: str) -> str:
    """The issue's title (resolver output), else the task's first line."""
    issue = record.get("issue")
    if isinstance(issue, dict) and isinstance(issue.get("title"), str) and issue["title"]:
        return task_title(str(issue["title"]))
    return title_from(messages, source)
