"""The durable summary boundary: where a turn may start reading the log.

Once the rolling summary folds the oldest messages of the active path, nothing
before the first unfolded message is ever sent again, except the summary
itself, which goes where the first folded message was. So a turn needs only:
the path's first message (the **root**, folded: it carries the summary's
position and the session's first task), then the path from the **window
start** on. The window start is the last user message at or before the first
unfolded message; it may lie inside a task episode. The segmenter only ever
looks back to the last user message (``bonsai.core.history.episodes``), so the window
continues the episode open at its start from a few persisted facts
(``OpenEpisode``): episodes segment, number and archive exactly as over the
whole path. A pinned or dropped message is never folded, so the boundary stops
before it; it never starts inside an archived episode (a fold may cover part
of one, and its archive entry lists every message).

Pure: ``window_start`` picks the start; the caller checks that the log read
from there derives the same path (no tree operation in between) and persists
the result with ``HistoryBoundary``.
"""

from __future__ import annotations

from dataclasses import dataclass

from bonsai.core.context.context_state import ContextState, HistoryBoundary, OpenEpisode
from bonsai.core.context.pipeline_types import Item
from bonsai.core.history.episodes import Episode, segment_entries


@dataclass(frozen=True, slots=True)
class WindowStart:
    index: int  # the first windowed item
    users_before: int  # user messages on the whole path before it
    episode: OpenEpisode  # the task episode open just before it


def window_items(items: list[Item], boundary: HistoryBoundary | None) -> list[Item]:
    """The items an assembly over ``boundary``'s window sees (episodes skip the root)."""
    if boundary is None or not items or items[0].id != boundary.root_id:
        return items
    return items[1:]


def resumed(episode: OpenEpisode | None) -> Episode | None:
    """The open episode of a boundary, as the segmenter continues it."""
    if episode is None:
        return None
    return Episode(
        number=episode.number,
        title=episode.title,
        work=episode.work,
        files=list(episode.files),
        task=episode.task,
        outcome=episode.outcome,
        carried=episode.messages,
        first_id=episode.start,
        last_seq=episode.last_seq,
    )


def open_episode(episode: Episode) -> OpenEpisode:
    """What a boundary keeps of the episode open at its start."""
    return OpenEpisode(
        number=episode.number,
        start=episode.start or "",
        messages=episode.size,
        title=episode.title,
        work=episode.work,
        files=list(episode.files),
        task=episode.task,
        outcome=episode.outcome,
        last_seq=episode.last_seq,
    )


def window_start(items: list[Item], state: ContextState) -> WindowStart | None:
    """Where the window may start on these items: the whole active path, or the
    current window (root first) when ``state.boundary`` is set. ``None`` when no
    boundary is possible or it would not move."""
    summary, current = state.summary, state.boundary
    if summary is None or len(items) < 2 or items[0].id not in summary.folded:
        return None
    if current is not None and current.episode is None:
        return None  # persisted before windows carried their open episode
    folded = state.folded()
    unfolded = next((i for i in range(1, len(items)) if items[i].id not in folded), len(items))
    inside = _inside_archives(state)
    lowest = 2 if current is not None else 1  # a window's root is not part of its episodes
    candidates = [
        i
        for i in range(lowest, min(unfolded, len(items) - 1) + 1)
        if items[i].message.role == "user" and items[i].id not in inside
    ]
    if not candidates:
        return None
    index = max(candidates)
    base = 1 if current is not None else 0
    own = items[base:index]
    resume = resumed(current.episode) if current is not None else None
    resets = state.episodes.resets if state.episodes is not None else []
    spans = segment_entries([(i.id, i.seq, i.message) for i in own], resets, resume)
    users = sum(1 for item in own if item.message.role == "user")
    if current is not None:
        users += current.users_before
    return WindowStart(index, users, open_episode(spans[-1]))


def _inside_archives(state: ContextState) -> frozenset[str]:
    """Messages of archived episodes other than their first: no window starts there."""
    episodes = state.episodes
    if episodes is None:
        return frozenset()
    return frozenset(i for entry in episodes.archives.values() for i in entry.ids[1:])
