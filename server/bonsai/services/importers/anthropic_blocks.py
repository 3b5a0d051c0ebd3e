"""Anthropic Messages content blocks, shared by the Anthropic JSON and Claude Code importers.

An assistant turn's ``text`` blocks are its content (joined with nothing
between them) and its ``tool_use`` blocks its calls (the ``input`` object
written as compact JSON). A user turn's ``tool_result`` blocks become
``role="tool"`` messages (in order, before any text of the same turn, which
becomes a user message); image blocks are counted. ``thinking``,
``redacted_thinking`` and any other block are left out and counted.
"""

from __future__ import annotations

import json
from typing import Any

from bonsai.domain import Message, ToolCall
from bonsai.services.importers.evidence import tool_evidence
from bonsai.services.importers.jsonread import Loc
from bonsai.services.importers.skipped import Skipped


def _blocks(content: Any, loc: Loc, path: str) -> list[dict[str, Any]]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise loc.error(path, "content must be a string or a list of content blocks")
    blocks: list[dict[str, Any]] = []
    for index, block in enumerate(content):
        if isinstance(block, str):
            blocks.append({"type": "text", "text": block})
        elif isinstance(block, dict):
            blocks.append(block)
        else:
            raise loc.error(f"{path}[{index}]", "a content block must be an object")
    return blocks


def _text(block: dict[str, Any], loc: Loc, path: str) -> str:
    text = block.get("text")
    if not isinstance(text, str):
        raise loc.error(f"{path}.text", "a text block needs a string 'text'")
    return text


def assistant_message(content: Any, loc: Loc, path: str, skipped: Skipped) -> Message:
    texts: list[str] = []
    calls: list[ToolCall] = []
    for index, block in enumerate(_blocks(content, loc, path)):
        kind = block.get("type")
        if kind == "text":
            texts.append(_text(block, loc, f"{path}[{index}]"))
        elif kind in ("tool_use", "server_tool_use"):
            call_id, name = block.get("id"), block.get("name")
            if not isinstance(call_id, str) or not isinstance(name, str) or not name:
                raise loc.error(f"{path}[{index}]", "a tool_use block needs a string id and name")
            arguments = json.dumps(block.get("input", {}), ensure_ascii=False)
            calls.append(ToolCall(id=call_id, name=name, arguments=arguments))
        else:
            skipped.add(f"{kind} block")
    return Message(role="assistant", content="".join(texts), tool_calls=tuple(calls))


def user_messages(
    content: Any, loc: Loc, path: str, skipped: Skipped, calls: dict[str, ToolCall]
) -> list[Message]:
    """The tool results of one user turn, then its text (if any)."""
    results: list[Message] = []
    texts: list[str] = []
    images = 0
    for index, block in enumerate(_blocks(content, loc, path)):
        kind = block.get("type")
        if kind == "text":
            texts.append(_text(block, loc, f"{path}[{index}]"))
        elif kind == "image":
            images += 1
        elif kind == "tool_result":
            results.append(_result(block, loc, f"{path}[{index}]", skipped, calls))
        else:
            skipped.add(f"{kind} block")
    if texts or images or not results:
        results.append(Message(role="user", content="".join(texts), images=images))
    return results


def _result(
    block: dict[str, Any], loc: Loc, path: str, skipped: Skipped, calls: dict[str, ToolCall]
) -> Message:
    call_id = block.get("tool_use_id")
    if not isinstance(call_id, str):
        raise loc.error(f"{path}.tool_use_id", "a tool_result needs a string tool_use_id")
    texts: list[str] = []
    images = 0
    for index, part in enumerate(_blocks(block.get("content"), loc, f"{path}.content")):
        kind = part.get("type")
        if kind == "text":
            texts.append(_text(part, loc, f"{path}.content[{index}]"))
        elif kind == "image":
            images += 1
        else:
            skipped.add(f"{kind} block")
    content = "".join(texts)
    is_error = block.get("is_error") is True
    call = calls.get(call_id)
    evidence = None
    if call is not None:
        evidence = tool_evidence(call.name, call.arguments, content, ok=not is_error)
    return Message(
        role="tool",
        content=content,
        tool_call_id=call_id,
        name=call.name if call else None,
        evidence=evidence,
        is_error=is_error,
        images=images,
    )
