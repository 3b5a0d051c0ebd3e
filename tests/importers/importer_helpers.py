"""Shared helpers for the importer tests (a plain module, not a conftest)."""

from __future__ import annotations

from pathlib import Path

from bonsai.domain import Message

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "importers"


def assert_paired(messages: list[Message]) -> None:
    """Every tool result answers an earlier call of this session; every call
    outside the last assistant message has exactly one result."""
    open_calls: dict[str, int] = {}
    answered: set[str] = set()
    last_assistant = max(i for i, m in enumerate(messages) if m.role == "assistant")
    for index, message in enumerate(messages):
        for call in message.tool_calls:
            assert call.id not in open_calls, f"duplicate call id {call.id}"
            open_calls[call.id] = index
        if message.role == "tool":
            assert message.tool_call_id in open_calls, f"orphan result at {index}"
            assert message.tool_call_id not in answered, f"second result at {index}"
            answered.add(message.tool_call_id)
    for call_id, index in open_calls.items():
        if index != last_assistant:
            assert call_id in answered, f"call {call_id} at message {index} has no result"
