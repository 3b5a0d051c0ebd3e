"""Builders for episode tests: sessions made of topic spans, inputs, a real counter.

The counter is bonsai's own ``TokenCounter`` over a one-character-per-token
estimator (exact character counts plus 4 tokens of framing per message), so
tests can build episodes of a known size.
"""

from __future__ import annotations

import json
from typing import Any

from bonsai.core.context import (
    AssembleInput,
    Assembly,
    Budget,
    ContextState,
    Item,
    SystemPart,
    system_text,
)
from bonsai.domain import Message, ToolCall
from bonsai.services.tokens import CharRatioEstimator, TokenCounter
from bonsai.settings import ContextSettings, EpisodeSettings
from context.ctx_helpers import items_of  # noqa: F401  (re-exported)

PERSONA = SystemPart(id="sys:persona", label="persona", text="You are bonsai, a coding agent.")
TOOLS: list[dict[str, Any]] = [
    {"name": "read_file", "description": "Read a file.", "parameters": {"type": "object"}},
    {"name": "recall", "description": "Recall.", "parameters": {"type": "object"}},
]


def char_counter() -> TokenCounter:
    return TokenCounter(CharRatioEstimator(1.0), family="openai")


def user(text: str) -> Message:
    return Message(role="user", content=text)


def title_call(title: str, call_id: str, action: str = "new_topic") -> list[Message]:
    args = json.dumps({"title": title, "episode_action": action})
    call = ToolCall(id=call_id, name="set_session_title", arguments=args)
    return [
        Message(role="assistant", tool_calls=(call,)),
        Message(role="tool", content="ok", tool_call_id=call_id, name="set_session_title"),
    ]


def read_step(tag: str, size: int) -> list[Message]:
    """One read call and its output of ``size`` characters (distinct per ``tag``)."""
    call = ToolCall(id=f"c_{tag}", name="read_file", arguments=json.dumps({"path": f"{tag}.py"}))
    output = f"<{tag}>" + "x" * max(size - len(tag) - 2, 0)
    return [
        Message(role="assistant", content=f"Reading {tag}.", tool_calls=(call,)),
        Message(role="tool", content=output, tool_call_id=call.id, name="read_file"),
    ]


def topic(name: str, steps: int, size: int, *, done: bool = True) -> list[Message]:
    """A user request, a new-topic title, ``steps`` reads, and a closing answer."""
    messages = [user(f"Please work on {name}."), *title_call(name.title(), f"t_{name}")]
    for n in range(steps):
        messages += read_step(f"{name}{n}", size)
    if done:
        messages.append(Message(role="assistant", content=f"Finished {name}."))
    return messages


# the pressure points these tests are written at (the defaults follow the tuned preset)
PRESSURE_KEYS = {
    "gc_trigger": 0.75,
    "compact_trigger": 0.95,
    "compact_target": 0.50,
    "summary_fraction": 0.04,
    "payback_horizon": 0.0,
}
PRESSURE = ContextSettings(**PRESSURE_KEYS)


def make_input(
    items: list[Item],
    *,
    state: ContextState | None = None,
    window: int = 50_000,
    reserve: int = 10_000,
    settings: ContextSettings | None = None,
    episodes: bool = True,
    turn: int = 1,
) -> AssembleInput:
    return AssembleInput(
        parts=[PERSONA],
        tools=list(TOOLS),
        items=items,
        state=state or ContextState(),
        budget=Budget(window=window, reserve=reserve),
        settings=settings or PRESSURE,
        family="openai",
        counter=char_counter(),
        turn=turn,
        episodes=EpisodeSettings() if episodes else None,
    )


def wire_tokens(assembly: Assembly) -> int:
    """The counter's count of exactly what the assembly sends."""
    counter = char_counter()
    total = counter.count_message(
        Message(role="system", content=system_text(assembly.system))
    ).tokens
    total += sum(counter.count_message(m).tokens for m in assembly.messages)
    return total + counter.count_tools(assembly.tools).tokens


def on_wire(assembly: Assembly) -> int:
    states = ("full", "pinned", "stubbed", "summarized", "archived")
    return sum(r.tokens for r in assembly.ledger if r.state in states)


def assert_paired(messages: list[Message]) -> None:
    """Every tool result answers an earlier call; every call is answered."""
    calls: set[str] = set()
    answered: set[str] = set()
    for message in messages:
        calls.update(c.id for c in message.tool_calls)
        if message.role == "tool":
            assert message.tool_call_id in calls, f"orphan result {message.tool_call_id}"
            answered.add(message.tool_call_id or "")
    assert calls == answered, f"unanswered calls {calls - answered}"


def kinds(assembly: Assembly) -> list[str]:
    return [r.kind for r in assembly.records]
