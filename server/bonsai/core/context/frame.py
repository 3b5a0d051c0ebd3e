"""The fixed frame around the conversation: system parts, tools, the tail message.

Placement per provider family: Anthropic keeps the volatile tail as the last
system block (its cache breakpoint sits right before it); every other family
has a rolling prefix cache, so the volatile tail goes after the history as the
newest user message and everything before it stays append-only. The
recitation ``<plan>`` block, when on, joins that tail.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bonsai.core.context.context_state import ContextState
from bonsai.core.context.pipeline_types import (
    VOLATILE_HEADING,
    VOLATILE_ID,
    SystemPart,
    TokenCounter,
)
from bonsai.core.context.summary import open_tasks
from bonsai.core.context.text import system_text
from bonsai.domain import Message
from bonsai.settings import ContextSettings

SYSTEM_IN_PROMPT_FAMILIES = frozenset({"anthropic"})


def tool_name(tool: dict[str, Any]) -> str:
    return str(tool.get("name", ""))


def validate_hidden_tools(hidden: list[str], tools: list[dict[str, Any]]) -> list[str]:
    """``hidden`` sorted and deduplicated; unknown names raise ``ValueError``
    listing the valid ones."""
    valid = sorted({tool_name(t) for t in tools})
    unknown = sorted(set(hidden) - set(valid))
    if unknown:
        raise ValueError(
            f"unknown tool name(s) to hide: {', '.join(unknown)}; "
            f"valid names: {', '.join(valid) or '(no tools)'}"
        )
    return sorted(set(hidden))


def visible_tools(tools: list[dict[str, Any]], hidden: list[str]) -> list[dict[str, Any]]:
    gone = frozenset(validate_hidden_tools(hidden, tools))
    return [t for t in tools if tool_name(t) not in gone]


def check_parts(parts: list[SystemPart]) -> None:
    """Raise ``ValueError`` for duplicate ids or a misplaced volatile tail."""
    seen: set[str] = set()
    for pos, part in enumerate(parts):
        if part.id in seen:
            raise ValueError(f"duplicate system part id {part.id!r}")
        seen.add(part.id)
        if part.id == VOLATILE_ID:
            if pos != len(parts) - 1 or part.cacheable:
                raise ValueError("the volatile part must be last and not cacheable")
            if not part.text.startswith(VOLATILE_HEADING):
                raise ValueError(f"the volatile part must start with {VOLATILE_HEADING!r}")
        elif not part.cacheable:
            raise ValueError(f"system part {part.id!r}: only {VOLATILE_ID} may be non-cacheable")


def place_parts(parts: list[SystemPart], family: str) -> tuple[list[SystemPart], SystemPart | None]:
    """(parts sent as the system prompt, the volatile part moved to the tail or None)."""
    check_parts(parts)
    if family in SYSTEM_IN_PROMPT_FAMILIES or not parts or parts[-1].id != VOLATILE_ID:
        return list(parts), None
    return list(parts[:-1]), parts[-1]


def plan_block(state: ContextState, settings: ContextSettings) -> str | None:
    """The recitation anchor: open tasks of the summary as a ``<plan>`` block."""
    if not settings.recitation or state.summary is None:
        return None
    tasks = open_tasks(state.summary.text)
    if not tasks:
        return None
    lines = "\n".join(f"- {t}" for t in tasks)
    return (
        f"<plan>\nOpen tasks (from the summary; the last one is the next step):\n{lines}\n</plan>"
    )


def tail_message(volatile: SystemPart | None, plan: str | None) -> Message | None:
    texts = [t for t in (volatile.text if volatile else None, plan) if t]
    return Message(role="user", content="\n\n".join(texts)) if texts else None


@dataclass(frozen=True, slots=True)
class Frame:
    system: list[SystemPart]
    moved: SystemPart | None
    tools: list[dict[str, Any]]
    tail: Message | None
    system_tokens: int
    tools_tokens: int
    tail_tokens: int
    confidence: str

    @property
    def tokens(self) -> int:
        return self.system_tokens + self.tools_tokens + self.tail_tokens


def system_message(parts: list[SystemPart]) -> Message | None:
    return Message(role="system", content=system_text(parts)) if parts else None


def build_frame(
    parts: list[SystemPart],
    tools: list[dict[str, Any]],
    state: ContextState,
    settings: ContextSettings,
    family: str,
    counter: TokenCounter,
) -> Frame:
    system, moved = place_parts(parts, family)
    tail = tail_message(moved, plan_block(state, settings))
    sys_msg = system_message(system)
    counts = [
        counter.count_message(sys_msg) if sys_msg else None,
        counter.count_tools(tools) if tools else None,
        counter.count_message(tail) if tail else None,
    ]
    tokens = [c.tokens if c else 0 for c in counts]
    weakest = min((c.confidence for c in counts if c), key=_rank, default="exact")
    return Frame(system, moved, tools, tail, tokens[0], tokens[1], tokens[2], weakest)


def _rank(level: str) -> int:
    return {"low": 0, "high": 1, "exact": 2}.get(level, 0)
