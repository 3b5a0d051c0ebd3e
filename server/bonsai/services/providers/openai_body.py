"""Build a Chat Completions request body from a ``ChatRequest``.

The system prompt becomes one ``system`` message (blocks joined by a blank
line); OpenAI-style providers cache prefixes on their own, so ``cache`` flags
and ``cache_last_message`` change nothing on this wire.
"""

from __future__ import annotations

from typing import Any, Literal

from bonsai.domain import Message
from bonsai.services.providers.types import ChatRequest, ProviderError, ToolSpec

Flavour = Literal["openai", "deepseek", "openai-compatible"]


def _tool_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def message_to_openai(msg: Message, position: int) -> dict[str, Any]:
    if msg.role == "tool":
        if not msg.tool_call_id:
            raise ProviderError(
                "bad_request", f"message {position} has role 'tool' but no tool_call_id"
            )
        return {"role": "tool", "tool_call_id": msg.tool_call_id, "content": msg.content}
    if msg.role == "assistant" and msg.tool_calls:
        return {
            "role": "assistant",
            "content": msg.content or None,
            "tool_calls": [_tool_call(c.id, c.name, c.arguments) for c in msg.tool_calls],
        }
    return {"role": msg.role, "content": msg.content}


def tool_to_openai(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    }


def wire_message(msg: Message, position: int, flavour: Flavour) -> dict[str, Any]:
    """One conversation message exactly as ``flavour``'s request carries it."""
    message = message_to_openai(msg, position)
    if flavour == "openai-compatible" and message.get("content", "") is None:
        # the spec allows null beside tool_calls; llama-cpp-python's server answers
        # it with HTTP 500 (its schema wants a string), and "" means the same
        message["content"] = ""
    return message


def build_openai_body(req: ChatRequest, flavour: Flavour) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    if req.system:
        messages.append({"role": "system", "content": "\n\n".join(b.text for b in req.system)})
    messages.extend(wire_message(m, i, flavour) for i, m in enumerate(req.messages))
    body: dict[str, Any] = {"model": req.model, "messages": messages}
    if req.tools:
        body["tools"] = [tool_to_openai(t) for t in req.tools]
        if flavour == "openai-compatible":
            # the API's default with tools, said out loud: llama-cpp-python's
            # chatml-function-calling drops the tools when tool_choice is absent
            body["tool_choice"] = "auto"
    # OpenAI proper deprecated max_tokens (o-series reject it); others only know max_tokens.
    limit_key = "max_completion_tokens" if flavour == "openai" else "max_tokens"
    body[limit_key] = req.max_tokens
    if req.temperature is not None:
        body["temperature"] = req.temperature
    body["stream"] = True
    body["stream_options"] = {"include_usage": True}
    return body
