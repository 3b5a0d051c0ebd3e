"""Anthropic Messages JSON: a request body ``{"system": …, "messages": [...]}``
or a plain JSON array of messages, roles ``user`` and ``assistant`` with string
or block content (see :mod:`anthropic_blocks`). ``system`` (a string or text
blocks) becomes the system message; every other key is ignored."""

from __future__ import annotations

from typing import Any

from bonsai.domain import Message, ToolCall
from bonsai.services.importers.anthropic_blocks import assistant_message, user_messages
from bonsai.services.importers.common import check_run, title_from
from bonsai.services.importers.jsonread import Loc, as_dict, as_list, load_json
from bonsai.services.importers.linking import link_tool_results
from bonsai.services.importers.model import ImportedSession
from bonsai.services.importers.skipped import Skipped


def parse(text: str, source: str, run: int = 0) -> ImportedSession:
    check_run(run, 1, source)
    loc = Loc(source)
    doc = load_json(text, source)
    skipped = Skipped(source)
    messages: list[Message] = []
    if isinstance(doc, dict):
        system = _system(doc.get("system"), loc)
        if system:
            messages.append(Message(role="system", content=system))
        items, base = as_list(doc.get("messages"), loc, "messages"), "messages"
    else:
        items, base = as_list(doc, loc, "$"), ""
    calls: dict[str, ToolCall] = {}
    for index, item in enumerate(items):
        path = f"{base}[{index}]"
        obj = as_dict(item, loc, path)
        role = obj.get("role")
        if role == "assistant":
            message = assistant_message(obj.get("content"), loc, f"{path}.content", skipped)
            calls.update((call.id, call) for call in message.tool_calls)
            messages.append(message)
        elif role == "user":
            messages.extend(
                user_messages(obj.get("content"), loc, f"{path}.content", skipped, calls)
            )
        elif role == "system" and isinstance(obj.get("content"), str):
            messages.append(Message(role="system", content=obj["content"]))
        else:
            skipped.add(f"role {role}")
    if not any(m.role != "system" for m in messages):
        raise loc.error(base or "$", "the file holds no message to import")
    warnings: list[str] = []
    skipped.report(warnings)
    messages = link_tool_results(messages, source, warnings)
    return ImportedSession(
        format="anthropic",
        title=title_from(messages, source),
        messages=messages,
        runs=1,
        source=source,
        warnings=warnings,
    )


def _system(value: Any, loc: Loc) -> str:
    if value is None or isinstance(value, str):
        return value or ""
    blocks = as_list(value, loc, "system")
    texts = [b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)]
    return "".join(texts)
