"""The Anthropic Messages wire, as the simulator speaks it.

Validation mirrors what the real API rejects (missing ``anthropic-version``,
roles, empty text blocks, unpaired ``tool_use``/``tool_result``, more than four
``cache_control`` blocks); rendering follows the documented event sequence
``message_start``, ``ping``, ``content_block_*``, ``message_delta``,
``message_stop`` and the usage split into uncached input, cache reads and
cache writes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from bonsai.sim.frames import ReplyUsage, arg_pieces, sse, text_pieces
from bonsai.sim.prompt import content_text
from bonsai.sim.script import Reply, ToolCallSpec

MAX_CACHE_BLOCKS = 4
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def error_json(status: int, message: str) -> dict[str, Any]:
    etype = ERROR_TYPES.get(status, "api_error")
    return {"type": "error", "error": {"type": etype, "message": message}}


def _blocks(content: Any) -> list[Any]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])


def _cache_blocks(body: dict[str, Any]) -> int:
    system = body.get("system")
    blocks = list(body.get("tools") or []) + (system if isinstance(system, list) else [])
    for msg in body.get("messages") or []:
        if isinstance(msg, dict):
            blocks += _blocks(msg.get("content"))
    return sum(1 for b in blocks if isinstance(b, dict) and b.get("cache_control"))


def _check_block(block: Any, where: str, role: str) -> str | None:
    kind = block.get("type") if isinstance(block, dict) else None
    if kind == "text":
        return (
            None
            if str(block.get("text", "")).strip()
            else f"{where}: text content blocks must contain non-whitespace text"
        )
    if kind == "tool_use" and role == "assistant":
        if block.get("id") and block.get("name") and isinstance(block.get("input"), dict):
            return None
        return f"{where}: tool_use needs id, name and an input object"
    if kind == "tool_result" and role == "user":
        return None if block.get("tool_use_id") else f"{where}: tool_result needs tool_use_id"
    if kind in ("image", "document"):
        return None
    return f"{where}: unexpected content block {kind!r} in a {role} message"


def _check_pairing(i: int, blocks: list[Any], expected: set[str]) -> str | None:
    results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
    if missing := expected - set(results):
        return (
            f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately "
            f"after: {', '.join(sorted(missing))}"
        )
    if extra := set(results) - expected:
        return f"messages.{i}: unexpected `tool_use_id` in `tool_result` blocks: {sorted(extra)[0]}"
    if results and blocks[0].get("type") != "tool_result":
        return f"messages.{i}: tool_result blocks must come first in the content"
    return None


def _check_messages(messages: list[Any]) -> str | None:
    expected: set[str] = set()
    for i, msg in enumerate(messages):
        role = msg.get("role") if isinstance(msg, dict) else None
        if role not in ("user", "assistant"):
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
        blocks = _blocks(msg.get("content"))
        if not blocks:
            return f"messages.{i}: all messages must have non-empty content"
        for j, block in enumerate(blocks):
            if error := _check_block(block, f"messages.{i}.content.{j}", role):
                return error
        if role == "user" and (error := _check_pairing(i, blocks, expected)):
            return error
        expected = {b["id"] for b in blocks if b.get("type") == "tool_use"}
    return None


def validate(body: dict[str, Any], headers: dict[str, str], *, counting: bool) -> str | None:
    """The error the real API would give, or None. ``counting``: count_tokens body."""
    if "anthropic-version" not in headers:
        return "anthropic-version: header is required"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model: Field required"
    if not counting and not (isinstance(body.get("max_tokens"), int) and body["max_tokens"] > 0):
        return "max_tokens: Field required (a positive integer)"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    for k, tool in enumerate(body.get("tools") or []):
        if not isinstance(tool, dict) or not tool.get("name") or "input_schema" not in tool:
            return f"tools.{k}: name and input_schema are required"
    if (found := _cache_blocks(body)) > MAX_CACHE_BLOCKS:
        return (
            f"A maximum of {MAX_CACHE_BLOCKS} blocks with cache_control may be provided. "
            f"Found {found}."
        )
    return _check_messages(messages)


def last_message(body: dict[str, Any]) -> tuple[str, str]:
    messages = body.get("messages") or [{}]
    blocks = _blocks(messages[-1].get("content"))
    results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    if results:
        text = "\n".join(
            c if isinstance(c := b.get("content", ""), str) else content_text(c) for b in results
        )
        return "tool", text
    texts = [str(b.get("text", "")) for b in blocks if isinstance(b, dict)]
    return str(messages[-1].get("role", "")), "\n".join(texts)


def usage_json(usage: ReplyUsage, *, output: int | None = None) -> dict[str, int]:
    return {
        "input_tokens": usage.prompt - usage.cached - usage.cache_written,
        "cache_creation_input_tokens": usage.cache_written,
        "cache_read_input_tokens": usage.cached,
        "output_tokens": usage.completion if output is None else output,
    }


@dataclass(frozen=True)
class Ctx:
    n: int
    model: str

    @property
    def id(self) -> str:
        return f"msg_sim{self.n:06d}"

    def call_id(self, index: int, given: str | None) -> str:
        return given or f"toolu_sim{self.n}_{index}"


def tool_input(call: ToolCallSpec) -> dict[str, Any]:
    if isinstance(call.arguments, dict):
        return call.arguments
    try:
        value = json.loads(call.arguments)
    except json.JSONDecodeError:
        value = None
    return value if isinstance(value, dict) else {"_raw": call.arguments}


def _message(
    ctx: Ctx, content: list[Any], stop: str | None, usage: dict[str, int]
) -> dict[str, Any]:
    return {
        "id": ctx.id,
        "type": "message",
        "role": "assistant",
        "model": ctx.model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }


def _block_frames(index: int, block: dict[str, Any], deltas: list[dict[str, Any]]) -> list[bytes]:
    """One content block: its start, its deltas, its stop."""
    start = {"type": "content_block_start", "index": index, "content_block": block}
    frames = [sse(start, "content_block_start")]
    for delta in deltas:
        frame = {"type": "content_block_delta", "index": index, "delta": delta}
        frames.append(sse(frame, "content_block_delta"))
    frames.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
    return frames


def _text_frames(index: int, text: str) -> list[bytes]:
    deltas = [{"type": "text_delta", "text": piece} for piece in text_pieces(text)]
    return _block_frames(index, {"type": "text", "text": ""}, deltas)


def _tool_frames(index: int, call_id: str, call: ToolCallSpec) -> list[bytes]:
    block = {"type": "tool_use", "id": call_id, "name": call.name, "input": {}}
    pieces = ["", *arg_pieces(call.arguments_json())]
    deltas = [{"type": "input_json_delta", "partial_json": piece} for piece in pieces]
    return _block_frames(index, block, deltas)


def stream_frames(reply: Reply, ctx: Ctx, usage: ReplyUsage) -> list[bytes]:
    start = _message(ctx, [], None, usage_json(usage, output=1))
    frames = [
        sse({"type": "message_start", "message": start}, "message_start"),
        sse({"type": "ping"}, "ping"),
    ]
    index = 0
    if reply.text:
        frames += _text_frames(index, reply.text)
        index += 1
    for i, call in enumerate(reply.tool_calls):
        frames += _tool_frames(index + i, ctx.call_id(i, call.id), call)
    delta = {"stop_reason": reply.effective_stop, "stop_sequence": None}
    frames.append(
        sse(
            {"type": "message_delta", "delta": delta, "usage": {"output_tokens": usage.completion}},
            "message_delta",
        )
    )
    frames.append(sse({"type": "message_stop"}, "message_stop"))
    return frames


def message_json(reply: Reply, ctx: Ctx, usage: ReplyUsage) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": reply.text}] if reply.text else []
    content += [
        {"type": "tool_use", "id": ctx.call_id(i, c.id), "name": c.name, "input": tool_input(c)}
        for i, c in enumerate(reply.tool_calls)
    ]
    return _message(ctx, content, reply.effective_stop, usage_json(usage))


def models_json(models: list[str]) -> dict[str, Any]:
    data = [
        {"type": "model", "id": m, "display_name": m, "created_at": "2025-01-01T00:00:00Z"}
        for m in models
    ]
    return {
        "data": data,
        "has_more": False,
        "first_id": models[0] if models else None,
        "last_id": models[-1] if models else None,
    }
