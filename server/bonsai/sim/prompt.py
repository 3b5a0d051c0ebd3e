"""Turn a request body into the token sequence the prefix cache compares.

Each part (tool definitions, system blocks, messages, content blocks) is
tokenised on its own and the pieces are concatenated, with a few marker ids
for structure, so a change late in the prompt never alters earlier tokens.
Counts therefore track the text closely (plus about three tokens per message),
the way the real APIs count.
"""

from __future__ import annotations

import json
from typing import Any

from bonsai.sim._tok import encode

MSG_START = 3_000_001
MSG_END = 3_000_002
BLOCK = 3_000_003
TOOLS = 3_000_004


def canonical(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def content_text(content: Any) -> str:
    """Text of an OpenAI ``content`` (a string, parts, or null)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content
        )
    return ""


def openai_prompt(body: dict[str, Any]) -> tuple[int, ...]:
    tokens: list[int] = []
    if body.get("tools"):
        tokens += [TOOLS, *encode(canonical(body["tools"]))]
    for msg in body.get("messages", []):
        tokens += [MSG_START, *encode(str(msg.get("role", "")))]
        tokens += encode(content_text(msg.get("content")))
        for call in msg.get("tool_calls") or []:
            fn = call.get("function") or {}
            tokens += encode(str(call.get("id", ""))) + encode(str(fn.get("name", "")))
            tokens += encode(str(fn.get("arguments", "")))
        if msg.get("tool_call_id"):
            tokens += encode(str(msg["tool_call_id"]))
        tokens.append(MSG_END)
    return tuple(tokens)


def _without_cache_control(block: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k != "cache_control"}


def anthropic_block_tokens(block: Any) -> list[int]:
    if isinstance(block, str):
        return [BLOCK, *encode(block)]
    kind = block.get("type")
    if kind == "text":
        return [BLOCK, *encode(str(block.get("text", "")))]
    if kind == "tool_use":
        head = encode(str(block.get("id", ""))) + encode(str(block.get("name", "")))
        return [BLOCK, *head, *encode(canonical(block.get("input", {})))]
    if kind == "tool_result":
        content = block.get("content", "")
        text = content if isinstance(content, str) else content_text(content)
        return [BLOCK, *encode(str(block.get("tool_use_id", ""))), *encode(text)]
    return [BLOCK, *encode(canonical(_without_cache_control(block)))]


def anthropic_prompt(body: dict[str, Any]) -> tuple[tuple[int, ...], list[int]]:
    """Tokens of the prompt and the positions right after each cache breakpoint."""
    tokens: list[int] = []
    breakpoints: list[int] = []

    def add(part: list[int], block: Any) -> None:
        tokens.extend(part)
        if isinstance(block, dict) and block.get("cache_control"):
            breakpoints.append(len(tokens))

    for tool in body.get("tools") or []:
        add([TOOLS, *encode(canonical(_without_cache_control(tool)))], tool)
    system = body.get("system")
    for block in [system] if isinstance(system, str) else system or []:
        add(anthropic_block_tokens(block), block)
    for msg in body.get("messages", []):
        tokens.extend([MSG_START, *encode(str(msg.get("role", "")))])
        content = msg.get("content")
        for block in [content] if isinstance(content, str) else content or []:
            add(anthropic_block_tokens(block), block)
        tokens.append(MSG_END)
    return tuple(tokens), breakpoints


def output_tokens(text: str, calls: list[tuple[str, str]]) -> int:
    """Completion tokens of a reply: its text plus each call's name and arguments."""
    count = len(encode(text)) + sum(len(encode(n)) + len(encode(a)) + 3 for n, a in calls)
    return max(count, 1)
