"""OpenAI-style chat messages: a JSON array, ``{"messages": [...]}`` (which
covers mini-swe-agent ``.traj.json``) or JSON Lines with one message a line."""

from __future__ import annotations

import json
from typing import Any

from bonsai.domain import Message, Role, ToolCall
from bonsai.services.importers.common import check_run, title_from
from bonsai.services.importers.errors import ImportFormatError
from bonsai.services.importers.evidence import tool_evidence
from bonsai.services.importers.jsonread import Loc, as_dict, as_list, load_json, load_jsonl, opt_str
from bonsai.services.importers.linking import link_tool_results
from bonsai.services.importers.model import ImportedSession
from bonsai.services.importers.parts import join_content
from bonsai.services.importers.skipped import Skipped

ROLE_MAP: dict[str, Role] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
    "function": "tool",
}

Record = tuple[Loc, str, Any]


class _UnknownRole(Exception):
    """A record of a role the format does not have: skipped and counted."""

    def __init__(self, role: str | None, error: ImportFormatError) -> None:
        super().__init__(str(error))
        self.role, self.error = role, error


def parse(text: str, source: str, run: int = 0) -> ImportedSession:
    check_run(run, 1, source)
    warnings: list[str] = []
    calls: dict[str, ToolCall] = {}
    skipped = Skipped(source)
    messages: list[Message] = []
    first_unknown: ImportFormatError | None = None
    for loc, path, value in _records(text, source, warnings):
        try:
            messages.append(_message(loc, path, value, calls, warnings))
        except _UnknownRole as unknown:
            skipped.add(f"role {unknown.role}")
            first_unknown = first_unknown or unknown.error
    if first_unknown is not None and not any(m.role != "system" for m in messages):
        raise first_unknown  # nothing usable remains: the first record it could not read
    skipped.report(warnings)
    messages = link_tool_results(messages, source, warnings)
    return ImportedSession(
        format="openai",
        title=title_from(messages, source),
        messages=messages,
        runs=1,
        source=source,
        warnings=warnings,
    )


def _records(text: str, source: str, warnings: list[str]) -> list[Record]:
    if _looks_like_jsonl(text):
        lines = load_jsonl(text, source)
        lines.report(warnings)
        return [(Loc(source, line), "$", value) for line, value in lines.rows]
    loc = Loc(source)
    doc = load_json(text, source)
    if isinstance(doc, list):
        return [(loc, f"[{i}]", value) for i, value in enumerate(doc)]
    if isinstance(doc, dict) and "role" in doc:
        return [(loc, "$", doc)]
    if isinstance(doc, dict) and "messages" in doc:
        items = as_list(doc["messages"], loc, "messages")
        return [(loc, f"messages[{i}]", value) for i, value in enumerate(items)]
    raise loc.error("$", "expected an array of messages or an object with a 'messages' array")


def _looks_like_jsonl(text: str) -> bool:
    lines = [line for line in text.split("\n") if line.strip()]
    if len(lines) < 2:
        return False
    try:
        first = json.loads(lines[0])
    except ValueError:
        return False
    return isinstance(first, dict) and "role" in first


def _message(
    loc: Loc, path: str, value: Any, calls: dict[str, ToolCall], warnings: list[str]
) -> Message:
    obj = as_dict(value, loc, path)
    raw_role = opt_str(obj, "role", loc, path)
    role = ROLE_MAP.get(raw_role or "")
    if role is None:
        raise _UnknownRole(
            raw_role,
            loc.error(
                f"{path}.role", f"unknown role {raw_role!r}; expected one of {sorted(ROLE_MAP)}"
            ),
        )
    content, images = join_content(obj.get("content"), loc, f"{path}.content", warnings)
    name = opt_str(obj, "name", loc, path)
    if role == "assistant":
        tool_calls = parse_tool_calls(obj, loc, path, warnings)
        calls.update((call.id, call) for call in tool_calls)
        return Message(
            role="assistant", content=content, tool_calls=tool_calls, images=images, name=name
        )
    if role == "tool":
        call_id = opt_str(obj, "tool_call_id", loc, path)
        if call_id is None and raw_role == "function":
            call_id = _legacy_id(calls, name)
        return _tool_result(content, call_id, name, images, calls.get(call_id or ""))
    return Message(role=role, content=content, images=images, name=name)


def _tool_result(
    content: str, call_id: str | None, name: str | None, images: int, call: ToolCall | None
) -> Message:
    return Message(
        role="tool",
        content=content,
        tool_call_id=call_id,
        name=name or (call.name if call else None),
        evidence=tool_evidence(call.name, call.arguments, content) if call else None,
        images=images,
    )


def parse_tool_calls(
    obj: dict[str, Any], loc: Loc, path: str, warnings: list[str]
) -> tuple[ToolCall, ...]:
    raw = obj.get("tool_calls")
    calls: list[ToolCall] = []
    for i, item in enumerate(as_list(raw, loc, f"{path}.tool_calls") if raw is not None else []):
        call_path = f"{path}.tool_calls[{i}]"
        call = as_dict(item, loc, call_path)
        fn = as_dict(call.get("function"), loc, f"{call_path}.function")
        call_id = opt_str(call, "id", loc, call_path)
        if call_id is None:
            call_id = f"call-{loc.line or 0}-{path}-{i}"
            warnings.append(f"{loc.source} at {call_path}: tool call has no id; using {call_id!r}")
        calls.append(_call(call_id, fn, loc, f"{call_path}.function"))
    legacy = obj.get("function_call")
    if legacy is not None:
        fn = as_dict(legacy, loc, f"{path}.function_call")
        calls.append(_call(f"fc-{loc.line or 0}-{path}", fn, loc, f"{path}.function_call"))
    return tuple(calls)


def _call(call_id: str, fn: dict[str, Any], loc: Loc, path: str) -> ToolCall:
    name = opt_str(fn, "name", loc, path)
    if not name:
        raise loc.error(f"{path}.name", "a tool call needs a function name")
    arguments = fn.get("arguments", "{}")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return ToolCall(id=call_id, name=name, arguments=arguments)


def _legacy_id(calls: dict[str, ToolCall], name: str | None) -> str | None:
    legacy = [cid for cid, call in calls.items() if cid.startswith("fc-") and call.name == name]
    return legacy[-1] if legacy else None
