"""User actions on ledger nodes: pin, unpin, drop, stub, restore; and node texts.

Every action returns the new state and a record. Pairing is kept: dropping an
assistant step drops its tool results with it, a tool result alone can only be
stubbed, and restoring a folded message unfolds its whole group. Restored
nodes are never collected again.
"""

from __future__ import annotations

import json
from typing import Literal

from bonsai.core.context.candidates import make_stub
from bonsai.core.context.context_state import ContextState, with_ids
from bonsai.core.context.groups import Group, call_names, group_items, group_of
from bonsai.core.context.pipeline_types import AssembleInput, Item, Record

Action = Literal["pin", "unpin", "drop", "stub", "restore"]
ACTIONS: tuple[Action, ...] = ("pin", "unpin", "drop", "stub", "restore")


def apply_action(
    state: ContextState, items: list[Item], node_id: str, action: Action, turn: int
) -> tuple[ContextState, Record]:
    """Apply a user action. Raises ``KeyError`` for an unknown node and
    ``ValueError`` for an action the node does not allow."""
    if action not in ACTIONS:
        raise ValueError(f"unknown action {action!r}; expected one of {', '.join(ACTIONS)}")
    if node_id.startswith(("sys:", "tool:", "ctx:")):
        raise ValueError(
            f"{node_id} is part of the system prompt or the tool list and is always sent; "
            "it cannot be pinned, dropped, stubbed or restored (hide tools in settings)"
        )
    if state.summary is not None and node_id == state.summary.node_id:
        return _summary_action(state, action)
    groups = group_items(items)
    owner = group_of(groups)
    if node_id not in owner:
        raise KeyError(f"no node {node_id!r} in this session's context")
    item = next(i for i in items if i.id == node_id)
    handler = _HANDLERS[action]
    new_state, detail = handler(state, item, owner[node_id], items, turn)
    return new_state, Record(kind=action, node_id=node_id, detail=detail)


def _pin(
    state: ContextState, item: Item, group: Group, items: list[Item], turn: int
) -> tuple[ContextState, str]:
    if item.id in state.pins:
        raise ValueError(f"node {item.id} is already pinned")
    restored, _ = _unfold(state, group)
    stubs = {k: v for k, v in restored.stubs.items() if k != item.id}
    pins = with_ids(restored.pins, [item.id])
    drops = with_ids(
        restored.drops, remove=frozenset(group.ids if _is_step_head(item) else (item.id,))
    )
    new = restored.model_copy(update={"pins": pins, "stubs": stubs, "drops": drops})
    return new, "pinned: never collected, sent in full"


def _unpin(
    state: ContextState, item: Item, group: Group, items: list[Item], turn: int
) -> tuple[ContextState, str]:
    if item.id not in state.pins:
        raise ValueError(f"node {item.id} is not pinned")
    return state.model_copy(
        update={"pins": with_ids(state.pins, remove=frozenset({item.id}))}
    ), "unpinned"


def _is_step_head(item: Item) -> bool:
    return item.message.role == "assistant"


def _drop(
    state: ContextState, item: Item, group: Group, items: list[Item], turn: int
) -> tuple[ContextState, str]:
    if item.message.role == "tool":
        tool = item.message.name or "a tool"
        raise ValueError(
            f"this is the result of {tool}: dropping it alone would leave the model's call "
            "without an answer; stub it, or drop the whole step (the call and all its results)"
        )
    if item.id in state.drops:
        raise ValueError(f"node {item.id} is already dropped")
    ids = list(group.ids) if _is_step_head(item) else [item.id]
    gone = frozenset(ids)
    new = state.model_copy(
        update={
            "drops": with_ids(state.drops, ids),
            "pins": with_ids(state.pins, remove=gone),
            "stubs": {k: v for k, v in state.stubs.items() if k not in gone},
            "restored": with_ids(state.restored, remove=gone),
        }
    )
    extra = f" with its {len(ids) - 1} tool results" if len(ids) > 1 else ""
    return new, f"dropped{extra}; restorable"


def _stub(
    state: ContextState, item: Item, group: Group, items: list[Item], turn: int
) -> tuple[ContextState, str]:
    if item.id in state.stubs:
        raise ValueError(f"node {item.id} is already stubbed")
    if item.id in state.drops or item.id in state.folded():
        raise ValueError(f"node {item.id} is not in the context; restore it first")
    if item.message.role == "system":
        raise ValueError(f"{item.id} is a system message and cannot be stubbed")
    chars = len(item.message.content)
    entry = make_stub(
        item,
        0,
        "stubbed by the user",
        "user",
        turn,
        call_names(items),
        size=f"{chars:,} characters",
    )
    if len(entry.text) >= chars:  # a stub is sent in the node's place: it must be smaller
        raise ValueError(
            f"node {item.id} is {chars:,} characters; its stub would be {len(entry.text):,}: "
            "it would make the context bigger, so it is kept as it is"
        )
    stubs = {**state.stubs, item.id: entry}
    new = state.model_copy(
        update={"stubs": stubs, "pins": with_ids(state.pins, remove=frozenset({item.id}))}
    )
    return new, "stubbed by the user; restorable"


def _restore(
    state: ContextState, item: Item, group: Group, items: list[Item], turn: int
) -> tuple[ContextState, str]:
    folded = item.id in state.folded()
    if not (folded or item.id in state.stubs or item.id in state.drops):
        raise ValueError(f"node {item.id} is already sent in full; nothing to restore")
    new, ids = _unfold(state, group) if folded else (state, [item.id])
    if item.id in new.drops and _is_step_head(item):
        ids = list(group.ids)
    gone = frozenset(ids)
    new = new.model_copy(
        update={
            "stubs": {k: v for k, v in new.stubs.items() if k not in gone},
            "drops": with_ids(new.drops, remove=gone),
            "restored": with_ids(new.restored, ids),
        }
    )
    return new, f"restored {len(ids)} message(s); never collected again"


def _unfold(state: ContextState, group: Group) -> tuple[ContextState, list[str]]:
    """The state with ``group`` taken out of the summary's fold (no-op if not folded)."""
    summary = state.summary
    if summary is None or not set(group.ids) & set(summary.folded):
        return state, []
    ids = [i for i in group.ids if i in summary.folded]
    remaining = [i for i in summary.folded if i not in set(ids)]
    new_summary = summary.model_copy(update={"folded": remaining}) if remaining else None
    return state.model_copy(update={"summary": new_summary}), ids


def _summary_action(state: ContextState, action: Action) -> tuple[ContextState, Record]:
    summary = state.summary
    assert summary is not None
    if action != "restore":
        raise ValueError(f"{summary.node_id} is the rolling summary: it can only be restored")
    new = state.model_copy(
        update={"summary": None, "restored": with_ids(state.restored, summary.folded)}
    )
    detail = f"re-spliced {len(summary.folded)} folded messages; the summary is gone"
    return new, Record(kind="restore", node_id=summary.node_id, detail=detail)


_HANDLERS = {"pin": _pin, "unpin": _unpin, "drop": _drop, "stub": _stub, "restore": _restore}


def node_text(inp: AssembleInput, node_id: str) -> str:
    """The original full text of any node (system part, tool schema, message, summary)."""
    for part in inp.parts:
        if part.id == node_id:
            return part.text
    for tool in inp.tools:
        if f"tool:{tool.get('name', '')}" == node_id:
            return json.dumps(tool, indent=2, sort_keys=True, ensure_ascii=False)
    summary = inp.state.summary
    if summary is not None and summary.node_id == node_id:
        return summary.text
    for item in inp.items:
        if item.id == node_id:
            return _message_text(item)
    raise KeyError(f"no node {node_id!r} in this session's context")


def _message_text(item: Item) -> str:
    message = item.message
    calls = "".join(f"\n→ {c.name} {c.arguments}" for c in message.tool_calls)
    return message.content + calls
