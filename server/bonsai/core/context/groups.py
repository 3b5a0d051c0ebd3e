"""Message groups: the unit the pipeline protects and folds.

A group is one user message, or one assistant step together with the tool
results that answer its calls (so a call and its result never part), or a
lone system message. Parallel tool calls of one step land in one group.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bonsai.core.context.pipeline_types import Item

GroupKind = Literal["user", "step", "system", "orphan"]


@dataclass(frozen=True, slots=True)
class Group:
    index: int
    kind: GroupKind
    positions: tuple[int, ...]  # indices into the item list, in order
    ids: tuple[str, ...]


def group_items(items: list[Item]) -> list[Group]:
    """Partition ``items`` (in log order) into groups."""
    spans: list[tuple[GroupKind, list[int]]] = []
    for pos, item in enumerate(items):
        role = item.message.role
        if role == "tool" and spans and spans[-1][0] == "step":
            spans[-1][1].append(pos)
        elif role == "assistant":
            spans.append(("step", [pos]))
        elif role == "user":
            spans.append(("user", [pos]))
        elif role == "system":
            spans.append(("system", [pos]))
        else:  # a tool result with no step before it
            spans.append(("orphan", [pos]))
    return [
        Group(i, kind, tuple(ps), tuple(items[p].id for p in ps))
        for i, (kind, ps) in enumerate(spans)
    ]


def group_of(groups: list[Group]) -> dict[str, Group]:
    """Item id → its group."""
    return {item_id: g for g in groups for item_id in g.ids}


def call_names(items: list[Item]) -> dict[str, tuple[str, str]]:
    """Tool call id → (tool name, raw arguments), from every assistant message."""
    out: dict[str, tuple[str, str]] = {}
    for item in items:
        for call in item.message.tool_calls:
            out[call.id] = (call.name, call.arguments)
    return out
