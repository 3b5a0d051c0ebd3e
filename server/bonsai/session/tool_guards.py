"""Around each tool call of a turn: loop guards before it runs, read reuse after a read."""

from __future__ import annotations

import json
from typing import Any

from bonsai.agent.context_bridge import ContextBridge
from bonsai.agent.tools.base import ToolResult
from bonsai.core.context import loop_guard, read_reuse
from bonsai.domain import StoredMessage, ToolCall


class ToolGuards:
    def __init__(self, bridge: ContextBridge) -> None:
        self.bridge = bridge

    def guard(self, call: ToolCall, history: list[StoredMessage]) -> tuple[str, str]:
        """(level, message) of the loop guard for this call; its state is saved."""
        view = self.bridge.view(history)
        verdict = loop_guard(view.items, call, view.state)
        self.bridge.save_state(verdict.state)
        return verdict.level, verdict.message

    def after(self, call: ToolCall, result: ToolResult, history: list[StoredMessage]) -> ToolResult:
        """A read the model already has in view becomes a pointer to it."""
        evidence = result.evidence
        if evidence is None or evidence.kind != "read" or result.is_error:
            return result
        explicit = bool(_loads_dict(call.arguments).get("fresh"))
        view = self.bridge.view(history)
        pointer = read_reuse(
            view.items, evidence, explicit=explicit, state=view.state, text=result.content
        )
        return ToolResult(pointer, evidence) if pointer else result


def _loads_dict(raw: str) -> dict[str, Any]:
    try:
        value = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}
