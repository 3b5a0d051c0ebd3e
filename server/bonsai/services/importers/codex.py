"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Each line is ``{"timestamp", "type", "payload"}`` with ``type`` one of
``session_meta``, ``response_item``, ``compacted``, ``turn_context`` and
``event_msg``; early rollouts have a meta line (``id``, ``timestamp``,
``instructions``) and then bare response items. What the model saw is the
``response_item`` stream:

- ``message`` (roles ``user``, ``assistant``, ``developer``/``system``):
  ``input_text``/``output_text`` parts joined exactly, ``input_image`` counted;
- ``function_call`` and ``custom_tool_call`` (e.g. ``apply_patch``): a call,
  added to the assistant message just before it (one model response), else to
  a new assistant message; ``local_shell_call``: a ``shell`` call whose
  arguments are ``{"command": [...]}``;
- ``function_call_output``/``custom_tool_call_output``: the call's result (a
  string, a list of content items, or ``{"content", "success"}`` where
  ``success: false`` marks an error);
- ``reasoning`` (often encrypted), ``web_search_call``, ``ghost_snapshot`` and
  other items are left out and counted.

A ``compacted`` record's ``message`` (the summary Codex continued from) becomes
a user message; the history before it is kept. ``event_msg`` and
``turn_context`` repeat what the response items say (for the UI) and are not
read. The title is the first user message that is not Codex's own
``<environment_context>``/``<user_instructions>`` preamble.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from bonsai.domain import Message, Role, ToolCall
from bonsai.services.importers.common import check_run, task_title
from bonsai.services.importers.evidence import tool_evidence
from bonsai.services.importers.jsonread import Loc, as_dict, load_jsonl
from bonsai.services.importers.linking import link_tool_results
from bonsai.services.importers.model import ImportedSession
from bonsai.services.importers.parts import join_content
from bonsai.services.importers.skipped import Skipped
from bonsai.services.importers.stamps import Stamps, record_time

ROLES: dict[str, Role] = {
    "user": "user",
    "assistant": "assistant",
    "developer": "system",
    "system": "system",
}
NOT_READ = frozenset({"event_msg", "turn_context", "session_meta"})
PREAMBLES = ("<environment_context>", "<user_instructions>", "# AGENTS.md", "<INSTRUCTIONS>")


@dataclass
class _State:
    source: str
    skipped: Skipped
    warnings: list[str] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    calls: dict[str, ToolCall] = field(default_factory=dict)


def parse(text: str, source: str, run: int = 0) -> ImportedSession:
    check_run(run, 1, source)
    state = _State(source, Skipped(source))
    stamps = Stamps()
    lines = load_jsonl(text, source)
    for line, value in lines.rows:
        loc = Loc(source, line)
        record = as_dict(value, loc, "$")
        stamps.record(state.messages, record_time(record))
        kind = record.get("type")
        payload = record.get("payload")
        if kind == "response_item" and isinstance(payload, dict):
            _item(payload, loc, "payload", state)
        elif kind == "compacted" and isinstance(payload, dict):
            _compacted(payload, line, state)
        elif kind in NOT_READ:
            continue
        elif "payload" not in record and isinstance(kind, str):
            _item(record, loc, "$", state)  # an early rollout's bare response item
        elif {"id", "timestamp"} <= record.keys():
            continue  # an early rollout's meta line
        else:
            state.skipped.add(str(kind))
    if not any(m.role != "system" for m in state.messages):
        raise Loc(source).error("$", "the rollout holds no message to import")
    state.skipped.report(state.warnings)
    lines.report(state.warnings)
    messages = link_tool_results(state.messages, source, state.warnings)
    return ImportedSession(
        format="codex",
        title=_title(messages, source),
        messages=messages,
        runs=1,
        source=source,
        warnings=state.warnings,
        times=stamps.result(messages),
    )


def _item(item: dict[str, Any], loc: Loc, path: str, state: _State) -> None:
    kind = item.get("type")
    if kind == "message":
        _message(item, loc, path, state)
    elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
        _call(item, loc, path, state)
    elif kind in ("function_call_output", "custom_tool_call_output"):
        _output(item, loc, path, state)
    else:
        state.skipped.add(str(kind))


def _message(item: dict[str, Any], loc: Loc, path: str, state: _State) -> None:
    role = ROLES.get(str(item.get("role")))
    if role is None:
        state.skipped.add(f"message with role {item.get('role')}")
        return
    content, images = join_content(item.get("content"), loc, f"{path}.content", state.warnings)
    state.messages.append(Message(role=role, content=content, images=images))


def _call(item: dict[str, Any], loc: Loc, path: str, state: _State) -> None:
    kind = item["type"]
    call_id = item.get("call_id") or item.get("id")
    if not isinstance(call_id, str):
        raise loc.error(f"{path}.call_id", f"a {kind} needs a string call_id")
    if kind == "local_shell_call":
        action = item.get("action")
        command = action.get("command") if isinstance(action, dict) else None
        name, arguments = "shell", json.dumps({"command": command}, ensure_ascii=False)
    else:
        given = item.get("name")
        raw = item.get("arguments") if kind == "function_call" else item.get("input")
        if not isinstance(given, str) or not given:
            raise loc.error(f"{path}.name", f"a {kind} needs a name")
        name = given
        arguments = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
    call = ToolCall(id=call_id, name=name, arguments=arguments)
    state.calls[call_id] = call
    last = state.messages[-1] if state.messages else None
    if last is not None and last.role == "assistant":
        state.messages[-1] = last.model_copy(update={"tool_calls": (*last.tool_calls, call)})
    else:
        state.messages.append(Message(role="assistant", content="", tool_calls=(call,)))


def _output(item: dict[str, Any], loc: Loc, path: str, state: _State) -> None:
    call_id = item.get("call_id")
    if not isinstance(call_id, str):
        raise loc.error(f"{path}.call_id", "a tool output needs a string call_id")
    output = item.get("output")
    ok = True
    if isinstance(output, dict):
        ok = output.get("success") is not False
        output = output.get("content")
    content, images = join_content(output, loc, f"{path}.output", state.warnings)
    call = state.calls.get(call_id)
    evidence = tool_evidence(call.name, call.arguments, content, ok=ok) if call else None
    state.messages.append(
        Message(
            role="tool",
            content=content,
            tool_call_id=call_id,
            name=call.name if call else None,
            evidence=evidence,
            is_error=not ok,
            images=images,
        )
    )


def _compacted(payload: dict[str, Any], line: int, state: _State) -> None:
    state.warnings.append(f"{state.source}:{line}: the session was compacted here")
    message = payload.get("message")
    if isinstance(message, str) and message:
        state.messages.append(Message(role="user", content=message))


def _title(messages: list[Message], source: str) -> str:
    for message in messages:
        if message.role == "user" and not message.content.lstrip().startswith(PREAMBLES):
            title = task_title(message.content)
            if title:
                return title
    return source.rsplit("/", 1)[-1]
