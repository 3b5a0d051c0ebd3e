"""The Chat Completions wire, as the simulator speaks it.

Validation mirrors the checks the real API is strict about (roles, tool-call
pairing, ``max_tokens`` on reasoning models, ``stream_options`` without
``stream``); rendering follows the documented chunk and completion objects,
including ``usage`` with ``prompt_tokens_details.cached_tokens`` and, for
``deepseek-*`` models, ``prompt_cache_hit_tokens``/``prompt_cache_miss_tokens``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from bonsai.core.context.pipeline_types import VOLATILE_HEADING
from bonsai.sim.frames import CREATED_BASE, ReplyUsage, arg_pieces, sse, text_pieces
from bonsai.sim.prompt import content_text
from bonsai.sim.script import Reply

ROLES = {"system", "developer", "user", "assistant", "tool"}
REASONING_MODEL = re.compile(r"^(o\d|gpt-5)")
FINISH = {"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length"}
ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    404: ("invalid_request_error", "not_found"),
    429: ("requests", "rate_limit_exceeded"),
}


def is_deepseek(model: str) -> bool:
    return model.lower().startswith("deepseek")


def error_json(status: int, message: str) -> dict[str, Any]:
    etype, code = ERROR_TYPES.get(status, ("server_error", None))
    return {"error": {"message": message, "type": etype, "param": None, "code": code}}


def _check_call(call: Any, where: str) -> str | None:
    fn = call.get("function") if isinstance(call, dict) else None
    if not isinstance(fn, dict) or not call.get("id") or call.get("type") != "function":
        return f"{where} must have 'id', type 'function' and a 'function' object"
    if not fn.get("name") or not isinstance(fn.get("arguments"), str):
        return f"{where}.function needs 'name' and string 'arguments'"
    return None


def _check_message(msg: Any, i: int, pending: set[str]) -> tuple[str | None, set[str]]:
    if not isinstance(msg, dict) or msg.get("role") not in ROLES:
        role = msg.get("role") if isinstance(msg, dict) else msg
        return f"Invalid value for 'messages[{i}].role': {role!r}", pending
    role = msg["role"]
    if role == "tool":
        if msg.get("tool_call_id") not in pending:
            return (
                f"Invalid parameter: messages[{i}] with role 'tool' must be a response to a "
                "preceding message with 'tool_calls'."
            ), pending
        return None, pending - {msg["tool_call_id"]}
    if pending:
        return (
            "An assistant message with 'tool_calls' must be followed by tool messages "
            f"responding to each 'tool_call_id'. Missing: {', '.join(sorted(pending))}"
        ), pending
    calls = (msg.get("tool_calls") or []) if role == "assistant" else []
    for j, call in enumerate(calls):
        if error := _check_call(call, f"messages[{i}].tool_calls[{j}]"):
            return error, pending
    if not calls and not isinstance(msg.get("content"), str | list):
        return f"Invalid value for 'messages[{i}].content': expected a string or array", pending
    return None, {c["id"] for c in calls}


def validate(body: dict[str, Any]) -> str | None:
    """The error message the real API would give, or None if the body is acceptable."""
    model = body.get("model")
    if not isinstance(model, str) or not model:
        return "you must provide a model parameter"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "Invalid 'messages': expected a non-empty array."
    if "max_tokens" in body and REASONING_MODEL.match(model):
        return (
            "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead."
        )
    if body.get("stream_options") is not None and not body.get("stream"):
        return "The 'stream_options' parameter is only allowed when 'stream' is enabled."
    for k, tool in enumerate(body.get("tools") or []):
        fn = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(fn, dict) or tool.get("type") != "function" or not fn.get("name"):
            return f"Invalid 'tools[{k}]': expected {{type: 'function', function: {{name, ...}}}}"
    pending: set[str] = set()
    for i, msg in enumerate(messages):
        error, pending = _check_message(msg, i, pending)
        if error:
            return error
    if pending:
        return f"tool_call_ids without tool responses: {', '.join(sorted(pending))}"
    return None


def last_message(body: dict[str, Any]) -> tuple[str, str]:
    """The newest message a rule should see. bonsai appends its volatile state as
    the newest user message (rolling-cache placement); that block is context,
    not the user's words, so rules and echoes look past it."""
    messages = body.get("messages") or [{}]
    for message in reversed(messages):
        text = content_text(message.get("content"))
        if message.get("role") == "user" and text.startswith(VOLATILE_HEADING):
            continue
        return str(message.get("role", "")), text
    last = messages[-1]
    return str(last.get("role", "")), content_text(last.get("content"))


def usage_json(usage: ReplyUsage, model: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "prompt_tokens": usage.prompt,
        "completion_tokens": usage.completion,
        "total_tokens": usage.prompt + usage.completion,
        "prompt_tokens_details": {"cached_tokens": usage.cached, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }
    if is_deepseek(model):
        out["prompt_cache_hit_tokens"] = usage.cached
        out["prompt_cache_miss_tokens"] = usage.prompt - usage.cached
    return out


@dataclass(frozen=True)
class Ctx:
    n: int
    model: str
    include_usage: bool

    @property
    def id(self) -> str:
        return f"chatcmpl-sim{self.n:06d}"

    def call_id(self, index: int, given: str | None) -> str:
        return given or f"call_sim{self.n}_{index}"


def _chunk(ctx: Ctx, choices: list[dict[str, Any]], usage: Any = None) -> bytes:
    obj: dict[str, Any] = {
        "id": ctx.id,
        "object": "chat.completion.chunk",
        "created": CREATED_BASE + ctx.n,
        "model": ctx.model,
        "system_fingerprint": "fp_bonsai_sim",
        "choices": choices,
    }
    if ctx.include_usage:
        obj["usage"] = usage
    return sse(obj)


def _delta(delta: dict[str, Any], finish: str | None = None) -> list[dict[str, Any]]:
    return [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]


def stream_frames(reply: Reply, ctx: Ctx, usage: ReplyUsage) -> list[bytes]:
    frames = [_chunk(ctx, _delta({"role": "assistant", "content": "", "refusal": None}))]
    frames += [_chunk(ctx, _delta({"content": piece})) for piece in text_pieces(reply.text)]
    for i, call in enumerate(reply.tool_calls):
        head = {"index": i, "id": ctx.call_id(i, call.id), "type": "function"}
        head["function"] = {"name": call.name, "arguments": ""}
        frames.append(_chunk(ctx, _delta({"tool_calls": [head]})))
        for piece in arg_pieces(call.arguments_json()):
            part = {"index": i, "function": {"arguments": piece}}
            frames.append(_chunk(ctx, _delta({"tool_calls": [part]})))
    frames.append(_chunk(ctx, _delta({}, FINISH[reply.effective_stop])))
    if ctx.include_usage:
        frames.append(_chunk(ctx, [], usage_json(usage, ctx.model)))
    frames.append(b"data: [DONE]\n\n")
    return frames


def completion_json(reply: Reply, ctx: Ctx, usage: ReplyUsage) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": reply.text or None,
        "refusal": None,
        "annotations": [],
    }
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": ctx.call_id(i, c.id),
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments_json()},
            }
            for i, c in enumerate(reply.tool_calls)
        ]
    return {
        "id": ctx.id,
        "object": "chat.completion",
        "created": CREATED_BASE + ctx.n,
        "model": ctx.model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": FINISH[reply.effective_stop],
            }
        ],
        "usage": usage_json(usage, ctx.model),
        "system_fingerprint": "fp_bonsai_sim",
    }


def models_json(models: list[str]) -> dict[str, Any]:
    data = [
        {"id": m, "object": "model", "created": CREATED_BASE, "owned_by": "bonsai-sim"}
        for m in models
    ]
    return {"object": "list", "data": data}
