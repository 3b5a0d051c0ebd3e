"""Exact Anthropic counts through an injected ``count_tokens`` callable.

The HTTP client lives with the provider code; this module only builds the
request body (the shape of Anthropic's ``/v1/messages/count_tokens``: ``model``,
optional ``system``, ``messages``, optional ``tools``) and caches answers by
the content hash of that body, in memory and optionally in a persistent
dict-like store shared across restarts.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from bonsai.domain import Message, content_hash
from bonsai.services.tokens.cache import LRUCache
from bonsai.services.tokens.tool_schema import normalize_tool

log = logging.getLogger(__name__)

CountTokensApi = Callable[[dict[str, Any]], Awaitable[int]]
Block = dict[str, Any]


class ApiCount(BaseModel):
    """One answer of the count_tokens API and whether it came from a cache."""

    model_config = ConfigDict(frozen=True)

    tokens: int
    cached: bool


def anthropic_payload(
    model: str, messages: Sequence[Message], tools: Sequence[dict[str, Any]] = ()
) -> dict[str, Any]:
    """The count_tokens request body for ``messages`` and ``tools``."""
    if not model:
        raise ValueError("the count_tokens API needs a model name")
    system = "\n\n".join(m.content for m in messages if m.role == "system" and m.content)
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _blocks(message)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    payload: dict[str, Any] = {"model": model, "messages": turns}
    if system:
        payload["system"] = system
    if tools:
        payload["tools"] = [_tool(tool, i) for i, tool in enumerate(tools)]
    return payload


def payload_key(payload: dict[str, Any]) -> str:
    """Content hash of a request body (key order does not matter)."""
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return content_hash(canonical)


class ApiTokenCounter:
    """Calls ``count_tokens_api`` once per distinct request body."""

    def __init__(
        self,
        count_tokens_api: CountTokensApi,
        *,
        store: MutableMapping[str, int] | None = None,
        memory_size: int = 1024,
    ) -> None:
        self._api = count_tokens_api
        self._store = store
        self._memory: LRUCache[int] = LRUCache(memory_size)
        self.calls = 0

    async def count(self, payload: dict[str, Any]) -> ApiCount:
        key = payload_key(payload)
        hit = self._memory.get(key)
        if hit is None and self._store is not None:
            hit = self._store.get(key)
            if hit is not None:
                self._memory.put(key, hit)
        if hit is not None:
            return ApiCount(tokens=hit, cached=True)
        self.calls += 1
        tokens = await self._api(payload)
        if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 0:
            raise ValueError(f"count_tokens API returned {tokens!r}, expected an int >= 0")
        self._memory.put(key, tokens)
        self._persist(key, tokens)
        return ApiCount(tokens=tokens, cached=False)

    def _persist(self, key: str, tokens: int) -> None:
        if self._store is None:
            return
        try:
            self._store[key] = tokens
        except Exception as exc:  # a store failure must not lose the count itself
            log.warning("could not persist a count_tokens result: %s", exc)


def _blocks(message: Message) -> list[Block]:
    if message.role == "tool":
        result: Block = {"type": "tool_result", "tool_use_id": message.tool_call_id or ""}
        result["content"] = message.content
        return [result]
    blocks: list[Block] = []
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls:
        use: Block = {"type": "tool_use", "id": call.id, "name": call.name}
        use["input"] = _arguments(call.arguments)
        blocks.append(use)
    return blocks


def _arguments(raw: str) -> Any:
    try:
        parsed = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError:
        return {"arguments": raw}
    return parsed if isinstance(parsed, dict) else {"arguments": parsed}


def _tool(tool: dict[str, Any], index: int) -> Block:
    name, description, params = normalize_tool(tool, index)
    block: Block = {"name": name, "input_schema": params or {"type": "object"}}
    if description:
        block["description"] = description
    return block
