"""Build an Anthropic Messages request body from a ``ChatRequest``.

* system blocks become text blocks; ``cache=True`` adds ``cache_control``;
* assistant text and tool calls become ``text`` + ``tool_use`` blocks;
* tool results become ``tool_result`` blocks, and consecutive ones share one
  user message (results first, as the API requires);
* a ``system`` message inside the conversation is sent as user text (the
  Messages API has no system role there);
* with ``cache_last_message`` the last block of the last message gets a
  breakpoint. At most four breakpoints are allowed; more is a ``bad_request``.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from bonsai.domain import Message, ToolCall
from bonsai.services.providers.types import ChatRequest, ProviderError, ToolSpec

log = logging.getLogger("bonsai.providers")

EPHEMERAL = {"type": "ephemeral"}
MAX_BREAKPOINTS = 4
Block = dict[str, Any]


def tool_input(call: ToolCall) -> dict[str, Any]:
    """``tool_use.input`` must be an object; keep unparsable arguments visible."""
    try:
        value = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        value = None
    if isinstance(value, dict):
        return value
    log.warning("tool call %s: arguments are not a JSON object; sent as _raw_arguments", call.id)
    return {"_raw_arguments": call.arguments}


def _text(text: str) -> list[Block]:
    return [{"type": "text", "text": text}] if text.strip() else []


def message_blocks(msg: Message, position: int) -> tuple[str, list[Block]]:
    if msg.role == "tool":
        if not msg.tool_call_id:
            raise ProviderError(
                "bad_request", f"message {position} has role 'tool' but no tool_call_id"
            )
        block: Block = {"type": "tool_result", "tool_use_id": msg.tool_call_id}
        if msg.content:
            block["content"] = msg.content
        if msg.status == "error":
            block["is_error"] = True
        return "user", [block]
    if msg.role == "assistant":
        uses = [
            {"type": "tool_use", "id": c.id, "name": c.name, "input": tool_input(c)}
            for c in msg.tool_calls
        ]
        return "assistant", _text(msg.content) + uses
    return "user", _text(msg.content)


def _results_first(blocks: list[Block]) -> list[Block]:
    results = [b for b in blocks if b["type"] == "tool_result"]
    return results + [b for b in blocks if b["type"] != "tool_result"]


def anthropic_messages(messages: list[Message]) -> list[dict[str, Any]]:
    merged: list[dict[str, Any]] = []
    for position, msg in enumerate(messages):
        role, blocks = message_blocks(msg, position)
        if not blocks:
            log.warning("message %d (%s) has no content; not sent to Anthropic", position, role)
            continue
        if merged and merged[-1]["role"] == role:
            merged[-1]["content"].extend(blocks)
        else:
            merged.append({"role": role, "content": blocks})
    for entry in merged:
        if entry["role"] == "user":
            entry["content"] = _results_first(entry["content"])
    return merged


def tool_to_anthropic(tool: ToolSpec) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}


def _system(req: ChatRequest) -> list[Block]:
    blocks: list[Block] = []
    for block in req.system:
        entry: Block = {"type": "text", "text": block.text}
        if block.cache:
            entry["cache_control"] = dict(EPHEMERAL)
        blocks.append(entry)
    return blocks


def _prompt_fields(req: ChatRequest) -> dict[str, Any]:
    messages = anthropic_messages(req.messages)
    if not messages:
        raise ProviderError("bad_request", "the request has no message with content to send")
    breakpoints = sum(b.cache for b in req.system) + int(req.cache_last_message)
    if breakpoints > MAX_BREAKPOINTS:
        raise ProviderError(
            "bad_request",
            f"{breakpoints} cache breakpoints requested; Anthropic allows {MAX_BREAKPOINTS}",
        )
    if req.cache_last_message:
        last = messages[-1]["content"][-1]
        last["cache_control"] = dict(EPHEMERAL)
    fields: dict[str, Any] = {"model": req.model}
    if req.system:
        fields["system"] = _system(req)
    fields["messages"] = messages
    if req.tools:
        fields["tools"] = [tool_to_anthropic(t) for t in req.tools]
    return fields


def build_anthropic_body(req: ChatRequest) -> dict[str, Any]:
    body = _prompt_fields(req)
    body["max_tokens"] = req.max_tokens
    if req.temperature is not None:
        body["temperature"] = req.temperature
    body["stream"] = True
    return body


def build_count_tokens_body(req: ChatRequest) -> dict[str, Any]:
    return _prompt_fields(req)
