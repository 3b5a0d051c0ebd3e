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
    return protection(
        groups,
        [item.id for item in person_messages(items)],
        [item.id for item in items if item.message.role == "system"],
        pointers(items),
        state,
        settings,
        superseded_reads(items) if superseded is None else superseded,
    )


def pointers(items: list[Item]) -> list[tuple[str, str]]:
    """(tool result id, the id it points to) of every read-reuse pointer, in order."""
    out: list[tuple[str, str]] = []
    for item in items:
        if item.message.role == "tool":
            target = pointer_target(item.message.content)
            if target is not None:
                out.append((item.id, target))
    return out


def protection(
    groups: list[Group],
    users: list[str],
    systems: list[str],
    pointers: list[tuple[str, str]],
    state: ContextState,
    settings: ContextSettings,
    superseded: dict[str, str],
) -> dict[str, str]:
    """``protected_ids`` from the items' facts: the ids of the person's user
    messages (``harness.person_messages``), of the system messages and the
    read-reuse pointers, in log order."""
    out: dict[str, str] = {}
    for group in groups[max(0, len(groups) - settings.keep_recent_groups) :]:
        for item_id in group.ids:
            out[item_id] = "recent message group"
    for item_id in users[max(0, len(users) - settings.keep_user_messages) :]:
        out.setdefault(item_id, "latest user message")
    for item_id in systems:
        out.setdefault(item_id, "system message")
    gone = (frozenset(state.stubs) | frozenset(state.drops) | state.folded()) if pointers else ()
    for item_id, target in pointers:
        if item_id not in gone and target not in superseded:
            out.setdefault(target, f"read-reuse pointer {item_id} refers to it")
    for item_id in state.pins:
        out.setdefault(item_id, "pinned")
    for item_id in state.restored:
        out.setdefault(item_id, "restored by the user")
    return out


def protected_groups(groups: list[Group], protected: dict[str, str]) -> frozenset[int]:
    """Indices of groups holding at least one protected node (never folded)."""
    return frozenset(g.index for g in groups if any(i in protected for i in g.ids))
