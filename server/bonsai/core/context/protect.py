"""What the pipeline may never collect, and why.

Always protected: system messages, the last ``keep_recent_groups`` groups, the
``keep_user_messages`` latest user messages the person wrote (a harness's notes
in the user role do not count: ``harness.py``), pinned nodes, restored nodes (never
collected again) and the targets of read-reuse pointers still in the context
(unless a later read or edit of the file superseded the target: then the
newer read holds the bytes the pointer stands for, or the file changed).
"""

from __future__ import annotations

from bonsai.core.context.candidates import superseded_reads
from bonsai.core.context.context_state import ContextState
from bonsai.core.context.groups import Group
from bonsai.core.context.harness import person_messages
from bonsai.core.context.pipeline_types import Item
from bonsai.core.context.reuse import pointer_target
from bonsai.settings import ContextSettings


def protected_ids(
    items: list[Item],
    groups: list[Group],
    state: ContextState,
    settings: ContextSettings,
    superseded: dict[str, str] | None = None,
) -> dict[str, str]:
    """Item id → the reason it is protected (``superseded``: ``superseded_reads(items)``
    when the caller has it already)."""
    out: dict[str, str] = {}
    for group in groups[max(0, len(groups) - settings.keep_recent_groups) :]:
        for item_id in group.ids:
            out[item_id] = "recent message group"
    users = person_messages(items)
    for item in users[max(0, len(users) - settings.keep_user_messages) :]:
        out.setdefault(item.id, "latest user message")
    for item in items:
        if item.message.role == "system":
            out.setdefault(item.id, "system message")
    gone = frozenset(state.stubs) | frozenset(state.drops) | state.folded()
    if superseded is None:
        superseded = superseded_reads(items)
    for item in items:
        if item.message.role == "tool" and item.id not in gone:
            target = pointer_target(item.message.content)
            if target is not None and target not in superseded:
                out.setdefault(target, f"read-reuse pointer {item.id} refers to it")
    for item_id in state.pins:
        out.setdefault(item_id, "pinned")
    for item_id in state.restored:
        out.setdefault(item_id, "restored by the user")
    return out


def protected_groups(groups: list[Group], protected: dict[str, str]) -> frozenset[int]:
    """Indices of groups holding at least one protected node (never folded)."""
    return frozenset(g.index for g in groups if any(i in protected for i in g.ids))
