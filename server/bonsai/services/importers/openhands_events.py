"""Turning OpenHands events into messages, one event at a time.

Left out on purpose: ``recall`` actions and observations (workspace context
the agent adds to its prompt in its own wording), agent-state changes, null
observations and condensation bookkeeping. ``system`` actions become the
system message; ``message`` actions become user or assistant messages.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from bonsai.domain import Message, ToolCall
from bonsai.services.importers.jsonread import Loc, as_dict, as_list
from bonsai.services.importers.openai_fmt import parse_tool_calls
from bonsai.services.importers.openhands_evidence import openhands_evidence
from bonsai.services.importers.parts import join_content

SKIP_ACTIONS = frozenset(
    {"recall", "change_agent_state", "condensation", "condensation_request", "null"}
)
SKIP_OBSERVATIONS = frozenset(
    {"recall", "agent_state_changed", "null", "agent_condensation", "condensation"}
)
EVENT_KEYS = frozenset(
    {"id", "timestamp", "source", "message", "action", "observation", "cause"}
    | {"tool_call_metadata", "llm_metrics"}
)
BOOKKEEPING = frozenset(
    {"thought", "is_confirmed", "confirmation_state", "security_risk", "action_risk"}
    | {"keep_prompt", "hidden", "blocking", "is_input", "is_static", "cwd", "impl_source"}
    | {"kernel_init_code", "images_urls", "image_urls", "wait_for_response", "include_extra"}
)


@dataclass
class _Call:
    call_id: str
    name: str
    action: str
    args: dict[str, Any]


@dataclass
class EventState:
    loc: Loc
    warnings: list[str]
    messages: list[Message] = field(default_factory=list)
    responses: set[str] = field(default_factory=set)
    by_event: dict[Any, _Call] = field(default_factory=dict)
    by_call_id: dict[str, _Call] = field(default_factory=dict)
    unanswered: list[_Call] = field(default_factory=list)
    agent_acted: bool = False
    seen: int = 0


def convert_event(event: dict[str, Any], path: str, state: EventState) -> None:
    state.seen += 1
    if "action" in event:
        _action(event, path, state)
    elif "observation" in event:
        _observation(event, path, state)
    else:
        state.warnings.append(
            f"{state.loc.source} at {path}: neither an action nor an observation; left out"
        )


def _kind(event: dict[str, Any], key: str, path: str, loc: Loc) -> str:
    value = event[key]
    if not isinstance(value, str):
        raise loc.error(f"{path}.{key}", "expected a string")
    return value


def _args(event: dict[str, Any], path: str, loc: Loc) -> dict[str, Any]:
    if "args" in event:
        return as_dict(event["args"], loc, f"{path}.args")
    return {k: v for k, v in event.items() if k not in EVENT_KEYS}


def _text(value: Any, path: str, loc: Loc) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise loc.error(path, "expected a string")
    return value


def _action(event: dict[str, Any], path: str, state: EventState) -> None:
    kind = _kind(event, "action", path, state.loc)
    if kind in SKIP_ACTIONS:
        return
    args = _args(event, path, state.loc)
    if kind == "system":
        text = args.get("content", event.get("message"))
        content = _text(text, f"{path}.args.content", state.loc)
        state.messages.append(Message(role="system", content=content))
    elif kind == "message":
        _message(event, args, path, state)
    else:
        _tool_action(event, kind, args, path, state)


def _message(event: dict[str, Any], args: dict[str, Any], path: str, state: EventState) -> None:
    source = event.get("source")
    if source not in ("user", "agent"):
        source = "agent" if state.agent_acted else "user"
    content = _text(args.get("content"), f"{path}.args.content", state.loc)
    urls = args.get("image_urls") or args.get("images_urls") or []
    images = len(urls) if isinstance(urls, list) else 0
    role = "user" if source == "user" else "assistant"
    state.messages.append(Message(role=role, content=content, images=images))


def _tool_action(
    event: dict[str, Any], kind: str, args: dict[str, Any], path: str, state: EventState
) -> None:
    state.agent_acted = True
    meta = event.get("tool_call_metadata")
    call = _from_metadata(meta, kind, args, path, state) if isinstance(meta, dict) else None
    if call is None:
        thought = _text(args.get("thought"), f"{path}.args.thought", state.loc)
        if kind == "finish":
            final = _text(args.get("final_thought"), f"{path}.args.final_thought", state.loc)
            state.messages.append(Message(role="assistant", content=thought or final))
            return
        event_id = event.get("id")
        call_id = f"oh-{event_id}" if event_id is not None else f"oh-e{state.seen - 1}"
        call = _Call(call_id, kind, kind, args)
        kept = {k: v for k, v in args.items() if k not in BOOKKEEPING}
        tool_call = ToolCall(id=call_id, name=kind, arguments=json.dumps(kept, ensure_ascii=False))
        state.messages.append(Message(role="assistant", content=thought, tool_calls=(tool_call,)))
    if event.get("id") is not None:
        state.by_event[event["id"]] = call
    state.by_call_id[call.call_id] = call
    state.unanswered.append(call)


def _from_metadata(
    meta: dict[str, Any], kind: str, args: dict[str, Any], path: str, state: EventState
) -> _Call | None:
    call_id, response = meta.get("tool_call_id"), meta.get("model_response")
    if not isinstance(call_id, str) or not isinstance(response, dict):
        return None
    response_id = str(response.get("id") or call_id)
    if response_id not in state.responses:
        where = f"{path}.tool_call_metadata.model_response"
        state.messages.append(_response_message(response, where, state))
        state.responses.add(response_id)
    name = meta.get("function_name")
    return _Call(call_id, name if isinstance(name, str) else kind, kind, args)


def _response_message(response: dict[str, Any], path: str, state: EventState) -> Message:
    loc = state.loc
    choices = as_list(response.get("choices"), loc, f"{path}.choices")
    if not choices:
        raise loc.error(f"{path}.choices", "a model response needs at least one choice")
    message = as_dict(as_dict(choices[0], loc, f"{path}.choices[0]").get("message"), loc, path)
    where = f"{path}.choices[0].message"
    content, images = join_content(message.get("content"), loc, f"{where}.content", state.warnings)
    calls = parse_tool_calls(message, loc, where, state.warnings)
    return Message(role="assistant", content=content, tool_calls=calls, images=images)


def _observation(event: dict[str, Any], path: str, state: EventState) -> None:
    kind = _kind(event, "observation", path, state.loc)
    if kind in SKIP_OBSERVATIONS:
        return
    content = _text(event.get("content"), f"{path}.content", state.loc)
    call = _answered_call(event, state)
    if call is None:
        state.messages.append(Message(role="user", content=content))
        return
    state.unanswered.remove(call)
    extras = event.get("extras")
    extras = extras if isinstance(extras, dict) else event
    evidence = openhands_evidence(call.action, call.args, kind, content, extras)
    state.messages.append(
        Message(
            role="tool",
            content=content,
            tool_call_id=call.call_id,
            name=call.name,
            evidence=evidence,
        )
    )


def _answered_call(event: dict[str, Any], state: EventState) -> _Call | None:
    meta = event.get("tool_call_metadata")
    if isinstance(meta, dict):
        call = state.by_call_id.get(str(meta.get("tool_call_id")))
        if call is not None and call in state.unanswered:
            return call
    cause = event.get("cause")
    if cause is not None:
        call = state.by_event.get(cause)
        return call if call is not None and call in state.unanswered else None
    if "id" not in event and state.unanswered:
        return state.unanswered[0]
    return None
