"""SWE-agent ``.traj`` files.

``history[]`` is what the model saw, so it is preferred; ``trajectory[]`` is
used only when there is no history. Two variants exist: the text format (the
assistant writes its command inside its text; the next user message is the
output) and function calling (``tool_calls`` on the assistant, ``role: tool``
results with ``tool_call_ids``). Both become typed tool calls and results; a
text-format action becomes a synthetic call ``swe-<index>`` whose arguments are
``{"command": <action>}``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from bonsai.domain import Message, Role, ToolCall
from bonsai.services.importers.common import check_run, title_from
from bonsai.services.importers.jsonread import Loc, as_dict, as_list, load_json, opt_str
from bonsai.services.importers.linking import link_tool_results
from bonsai.services.importers.model import ImportedSession
from bonsai.services.importers.openai_fmt import parse_tool_calls
from bonsai.services.importers.parts import join_content
from bonsai.services.importers.skipped import Skipped
from bonsai.services.importers.swe_commands import command_name, open_file, swe_evidence

ROLES: dict[str, Role] = {r: r for r in ("system", "user", "assistant", "tool")}


@dataclass
class _State:
    loc: Loc
    warnings: list[str]
    actions: dict[str, tuple[str, str]] = field(default_factory=dict)  # call id -> (name, action)
    awaiting: str | None = None  # text-format call id whose output comes next
    open_file: str | None = None


def parse(text: str, source: str, run: int = 0) -> ImportedSession:
    check_run(run, 1, source)
    loc = Loc(source)
    doc = as_dict(load_json(text, source), loc, "$")
    warnings: list[str] = []
    history = as_list(doc.get("history") or [], loc, "history")
    if history:
        messages = _from_history(history, _State(loc, warnings))
    elif doc.get("trajectory"):
        warnings.append(
            f"{source}: no history[]; rebuilt from trajectory[] "
            "(the system prompt and the task text are not in it)"
        )
        messages = _from_trajectory(as_list(doc["trajectory"], loc, "trajectory"), loc)
    else:
        raise loc.error("$", "a SWE-agent trajectory needs a non-empty history[] or trajectory[]")
    messages = link_tool_results(messages, source, warnings)
    return ImportedSession(
        format="swe-agent",
        title=_title(source, messages),
        messages=messages,
        runs=1,
        source=source,
        warnings=warnings,
    )


def _title(source: str, messages: list[Message]) -> str:
    name = PurePath(source).name
    return name.removesuffix(".traj") if name.endswith(".traj") else title_from(messages, source)


def _from_history(items: list[Any], state: _State) -> list[Message]:
    agent = _main_agent(items, state)
    messages: list[Message] = []
    skipped = Skipped(state.loc.source)
    first_unknown = None
    for index, item in enumerate(items):
        path = f"history[{index}]"
        obj = as_dict(item, state.loc, path)
        if agent is not None and obj.get("agent", agent) != agent:
            continue
        raw_role = opt_str(obj, "role", state.loc, path)
        if raw_role not in ROLES:
            skipped.add(f"role {raw_role}")
            first_unknown = first_unknown or state.loc.error(
                f"{path}.role", f"unknown role {raw_role!r}; expected one of {list(ROLES)}"
            )
            continue
        messages.append(_history_message(obj, path, index, state))
    if first_unknown is not None and not any(m.role != "system" for m in messages):
        raise first_unknown  # nothing usable remains
    skipped.report(state.warnings)
    return messages


def _main_agent(items: list[Any], state: _State) -> str | None:
    agents = list(dict.fromkeys(i.get("agent") for i in items if isinstance(i, dict)))
    agents = [a for a in agents if isinstance(a, str)]
    if len(agents) > 1:
        state.warnings.append(
            f"{state.loc.source}: history holds agents {agents}; kept only {agents[0]!r}"
        )
    return agents[0] if agents else None


def _history_message(obj: dict[str, Any], path: str, index: int, state: _State) -> Message:
    loc = state.loc
    raw_role = opt_str(obj, "role", loc, path)
    role = ROLES.get(raw_role or "")
    if role is None:
        raise loc.error(f"{path}.role", f"unknown role {raw_role!r}; expected one of {list(ROLES)}")
    content, images = join_content(obj.get("content"), loc, f"{path}.content", state.warnings)
    awaiting, state.awaiting = state.awaiting, None
    if role == "assistant":
        return _assistant(obj, path, index, content, images, state)
    if role == "tool":
        ids = obj.get("tool_call_ids") or [obj.get("tool_call_id")]
        ids = as_list(ids, loc, f"{path}.tool_call_ids")
        if len(ids) > 1:
            state.warnings.append(f"{loc.source} at {path}: several tool_call_ids; used the first")
        call_id = ids[0] if isinstance(ids[0], str) else None
        return _result(call_id, content, images, state)
    if role == "user" and awaiting is not None:
        return _result(awaiting, content, images, state)
    return Message(role=role, content=content, images=images)


def _assistant(
    obj: dict[str, Any], path: str, index: int, content: str, images: int, state: _State
) -> Message:
    action = opt_str(obj, "action", state.loc, path) or ""
    calls = parse_tool_calls(obj, state.loc, path, state.warnings)
    if not calls and action.strip():
        call_id = f"swe-{index}"
        calls = (_synthetic_call(call_id, action),)
        state.awaiting = call_id
    for call in calls:
        state.actions[call.id] = (call.name, action)
    return Message(role="assistant", content=content, tool_calls=calls, images=images)


def _synthetic_call(call_id: str, action: str) -> ToolCall:
    arguments = json.dumps({"command": action}, ensure_ascii=False)
    return ToolCall(id=call_id, name=command_name(action), arguments=arguments)


def _result(call_id: str | None, content: str, images: int, state: _State) -> Message:
    name, action = state.actions.get(call_id or "", (None, ""))
    evidence = swe_evidence(action, content, state.open_file) if action else None
    state.open_file = open_file(content) or state.open_file
    return Message(
        role="tool",
        content=content,
        tool_call_id=call_id,
        name=name,
        evidence=evidence,
        images=images,
    )


def _from_trajectory(steps: list[Any], loc: Loc) -> list[Message]:
    state = _State(loc, [])
    messages: list[Message] = []
    for index, step in enumerate(steps):
        path = f"trajectory[{index}]"
        obj = as_dict(step, loc, path)
        response = opt_str(obj, "response", loc, path)
        thought = opt_str(obj, "thought", loc, path) or ""
        action = opt_str(obj, "action", loc, path) or ""
        call_id = f"swe-{index}"
        call = _synthetic_call(call_id, action)
        state.actions[call_id] = (call.name, action)
        content = response if response is not None else thought
        messages.append(Message(role="assistant", content=content, tool_calls=(call,)))
        observation = opt_str(obj, "observation", loc, path)
        if observation is not None:
            messages.append(_result(call_id, observation, 0, state))
    return messages
