"""What the model cannot see now, and recall hits ranked with it first.

The recall tool searches the whole session log, where most messages matching
the agent's words are still in its window: returning those is no help. What
it asks recall for is what a stage took away (a stub, a fold, an archived
episode, a drop), and above all what it saw there (a tool output, a user
message): its own earlier words match its new ones best, but the rolling
summary already keeps its decisions. So hits come in three tiers, each in its
search order: hidden observations, then the agent's hidden messages, then what
the window still shows.
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


def recall_order(
    hits: Sequence[T], hidden: Callable[[T], bool], observation: Callable[[T], bool]
) -> list[T]:
    """``hits`` in the recall tool's order: hidden observations, the agent's hidden
    messages, then the rest, each part in its original (search) order."""

    def tier(hit: T) -> int:
        if not hidden(hit):
            return 2
        return 0 if observation(hit) else 1

    return sorted(hits, key=tier)  # stable: search order within a tier
