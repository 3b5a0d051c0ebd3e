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
    groups: list[Group] = []
    for pos, item in enumerate(items):
        add_item(groups, pos, item)
    return groups


_KINDS: dict[str, GroupKind] = {"assistant": "step", "user": "user", "system": "system"}


def add_item(groups: list[Group], pos: int, item: Item) -> None:
    """Put the next item (at ``pos`` in the item list) into ``groups``: a tool
    result joins the step before it, anything else opens a group."""
    role = item.message.role
    if role == "tool" and groups and groups[-1].kind == "step":
        last = groups[-1]
        groups[-1] = Group(last.index, "step", (*last.positions, pos), (*last.ids, item.id))
    else:  # a tool result with no step before it is an orphan
        groups.append(Group(len(groups), _KINDS.get(role, "orphan"), (pos,), (item.id,)))


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
