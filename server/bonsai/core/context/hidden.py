"""What the model cannot see now, and recall hits ranked with it first.

The recall tool searches the whole session log, where most messages matching
the agent's words are still in its window: returning those is no help. What
it asks recall for is what a stage took away (a stub, a fold, an archived
episode, a drop), so hits hidden from the window come first, in their search
order, and the visible ones after them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from bonsai.core.context.context_state import ContextState

RECALL_DEPTH = 50  # search hits ranked before the best few are kept
T = TypeVar("T")


def hidden_ids(state: ContextState) -> frozenset[str]:
    """Message ids the state keeps out of the window (stubbed, folded, archived, dropped)."""
    ids = set(state.stubs) | set(state.folded()) | set(state.drops)
    if state.episodes is not None:
        for entry in state.episodes.archives.values():
            ids.update(entry.ids)
    return frozenset(ids)


def hidden_first(hits: Sequence[T], hidden: Callable[[T], bool]) -> list[T]:
    """``hits`` with the hidden ones first, each part in its original order."""
    return [h for h in hits if hidden(h)] + [h for h in hits if not hidden(h)]
