"""The durable summary boundary: where a turn may start reading the log.

Once the rolling summary folds the oldest messages of the active path, nothing
before the first unfolded message is ever sent again, except the summary
itself, which goes where the first folded message was. So a turn needs only:
the path's first message (the **root**, folded: it carries the summary's
position and the session's first task), then the path from the **window
start** on. The window start is the first unfolded message, moved back to the
start of its task episode when episodes are on (so episodes segment, number
and archive exactly as over the whole path). A pinned or dropped message is
never folded, so the boundary stops before it.

Pure: ``window_start`` picks the start; the caller checks that the log read
from there derives the same path (no tree operation in between) and persists
the result with ``HistoryBoundary``.
"""

from __future__ import annotations

from bonsai.core.context.models import Item
from bonsai.core.context.state import ContextState, HistoryBoundary
from bonsai.core.episodes import segment_entries


def window_items(items: list[Item], boundary: HistoryBoundary | None) -> list[Item]:
    """The items an assembly over ``boundary``'s window sees (episodes skip the root)."""
    if boundary is None or not items or items[0].id != boundary.root_id:
        return items
    return items[1:]


def window_start(
    items: list[Item], state: ContextState, *, episodes: bool
) -> tuple[int, int, int] | None:
    """Where the window may start on these items: the whole active path, or the
    current window (root first) when ``state.boundary`` is set.

    Returns ``(index, users_before, episodes_before)``: the index of the first
    windowed item, and how many user messages and episodes lie before it on
    the whole path. ``None`` when no boundary is possible or it would not move."""
    summary, current = state.summary, state.boundary
    if summary is None or len(items) < 2 or items[0].id not in summary.folded:
        return None
    folded = state.folded()
    unfolded = next((i for i in range(1, len(items)) if items[i].id not in folded), len(items))
    base = 1 if current is not None else 0  # a window's root is not part of its episodes
    starts = {i for i in range(1, unfolded + 1) if i < len(items) and _opens(items[i])}
    episode_starts: list[int] = []
    if episodes:
        own = items[base:]
        spans = segment_entries([(i.id, i.seq, i.message) for i in own])
        position = {item.id: n for n, item in enumerate(own)}
        episode_starts = [base + position[e.ids[0]] for e in spans if e.ids]
        starts &= set(episode_starts)
    lowest = 2 if current is not None else 1
    candidates = [i for i in starts if i >= lowest]
    if not candidates:
        return None
    index = max(candidates)
    users = sum(1 for item in items[base:index] if item.message.role == "user")
    before = sum(1 for s in episode_starts if s < index)
    if current is not None:
        users += current.users_before
        before += current.episodes_before
    return index, users, before


def _opens(item: Item) -> bool:
    """A window opens on a group's first message, never on a tool result."""
    return item.message.role != "tool"
