"""The per-session context state the daemon persists and passes back each turn.

Everything that makes the assembled request differ from the plain session log
lives here: user actions (pins, drops, stubs, restores), GC and compaction
stubs with their exact text (so re-assertion is byte-identical), the rolling
summary and what it folds, loop-guard escalation, archived task episodes. It
round-trips through JSON
(``model_dump(mode="json")`` / ``model_validate``) without changing a byte of
the assembled request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

StubOrigin = Literal["gc", "compaction", "user"]
SummaryMode = Literal["deterministic", "provider"]


class _State(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class StubEntry(_State):
    """A node whose content is replaced by ``text`` (exactly these bytes)."""

    text: str
    reason: str
    origin: StubOrigin
    tokens_before: int = Field(ge=0)
    turn: int


class SummaryState(_State):
    """The rolling summary and the nodes it stands for.

    ``folded`` lists every item id whose message is replaced by the summary;
    ``through_seq`` is the highest seq it covers; ``revision`` counts updates
    (the summary node id is ``sum:<revision>``)."""

    text: str
    through_seq: int
    folded: list[str]
    mode: SummaryMode
    revision: int = Field(ge=1)
    turn: int

    @property
    def node_id(self) -> str:
        return f"sum:{self.revision}"


class BackgroundSummary(_State):
    """A summary made off the critical path, covering items up to ``through_seq``."""

    text: str
    through_seq: int
    mode: SummaryMode


class GuardState(_State):
    """Loop-guard escalation within the current user turn (reset by a new user message)."""

    since_seq: int = 0
    issued: dict[str, int] = Field(default_factory=dict)  # guard key -> highest level given


class ArchiveEntry(_State):
    """One archived episode: ``ids`` (in order) are sent as one card, exactly ``card``."""

    number: int = Field(ge=1)
    title: str
    ids: list[str] = Field(min_length=1)
    card: str
    tokens_before: int = Field(ge=0)
    turn: int


class EpisodeState(_State):
    """Task episodes. Keys are an episode's first message id (numbers can shift when
    the active path changes). ``restored`` episodes are never archived again;
    ``blocked`` ones were made non-archivable by a repair (key → why). ``resets``
    are the seqs of hard resets (``bonsai/session/reset``): each closes the open
    episode before the first message appended after it."""

    archives: dict[str, ArchiveEntry] = Field(default_factory=dict)
    restored: list[str] = Field(default_factory=list)
    blocked: dict[str, str] = Field(default_factory=dict)
    resets: list[int] = Field(default_factory=list)


class OpenEpisode(_State):
    """The task episode open just before a history window's start: what the
    segmenter carries over the boundary (``bonsai.core.history.episodes``), so a window
    that starts inside an episode continues it exactly as the whole path would."""

    number: int = Field(ge=1)
    start: str  # its first message id (the key of its archive/restore/blocked entries)
    messages: int = Field(ge=1)  # how many of its messages lie before the window
    title: str = ""
    work: int = Field(default=0, ge=0)
    files: list[str] = Field(default_factory=list)
    task: str = ""
    outcome: str = ""
    last_seq: int = Field(default=0, ge=0)  # its last message before the window (hard resets)


class HistoryBoundary(_State):
    """The durable summary boundary (see ``bonsai.core.context.boundary``).

    Every message of the active path before ``start_seq`` is folded into the
    rolling summary, so a turn reads only the path's first message (``root_id``,
    which stands for the whole folded prefix: the summary is sent where it is)
    and the log from ``start_seq`` on. ``users_before`` counts the user messages
    before ``start_seq`` on the path (turn numbers continue from there),
    ``episodes_before`` the episodes ended before ``episode``, the task
    episode open at ``start_seq`` (the window continues it; ``None`` only in
    boundaries persisted before windows could start inside an episode, which
    are set again from the whole log); ``ops_mark`` is the newest tree
    operation when it was set (a newer one means the path may have changed:
    read everything again)."""

    start_seq: int = Field(ge=1)
    root_id: str
    users_before: int = Field(ge=0)
    episodes_before: int = Field(ge=0)
    ops_mark: int = Field(ge=0)
    tokens_before: int = Field(default=0, ge=0)  # the path's size before ``start_seq``
    episode: OpenEpisode | None = None


class ColdState(_State):
    """State entries of messages before the boundary, moved out of the per-turn
    state so it stays bounded; merged back only when the whole log is read."""

    folded: list[str] = Field(default_factory=list)
    stubs: dict[str, StubEntry] = Field(default_factory=dict)
    pins: list[str] = Field(default_factory=list)
    drops: list[str] = Field(default_factory=list)
    restored: list[str] = Field(default_factory=list)
    archives: dict[str, ArchiveEntry] = Field(default_factory=dict)
    episodes_restored: list[str] = Field(default_factory=list)
    episodes_blocked: dict[str, str] = Field(default_factory=dict)


class ContextState(_State):
    """All persisted context decisions of one session."""

    version: int = 1
    pins: list[str] = Field(default_factory=list)
    drops: list[str] = Field(default_factory=list)
    stubs: dict[str, StubEntry] = Field(default_factory=dict)
    restored: list[str] = Field(default_factory=list)
    summary: SummaryState | None = None
    background: BackgroundSummary | None = None
    hidden_tools: list[str] = Field(default_factory=list)
    guard: GuardState = Field(default_factory=GuardState)
    compactions: int = 0
    episodes: EpisodeState | None = None  # None: no episode state (or episodes are off)
    # set: this state is the per-turn part; entries before the boundary are cold
    boundary: HistoryBoundary | None = None

    @model_serializer(mode="wrap")
    def _without_empty_episodes(self, handler: SerializerFunctionWrapHandler) -> Any:
        """Leave ``episodes`` and ``boundary`` out of the JSON when there is none:
        with episodes off nothing about them is persisted, and older states keep
        their exact bytes."""
        data = handler(self)
        if isinstance(data, dict):
            for key in ("episodes", "boundary"):
                if key in data and data[key] is None:
                    del data[key]
        return data

    def folded(self) -> frozenset[str]:
        return frozenset(self.summary.folded) if self.summary else frozenset()


def with_ids(
    ids: list[str], add: list[str] | tuple[str, ...] = (), remove: frozenset[str] = frozenset()
) -> list[str]:
    """``ids`` plus ``add`` minus ``remove``, deduplicated and sorted (stable JSON)."""
    return sorted((set(ids) | set(add)) - remove)


def split_state(
    state: ContextState,
    boundary: HistoryBoundary,
    cold_ids: frozenset[str],
    retired: frozenset[str] = frozenset(),
) -> tuple[ContextState, ColdState]:
    """The per-turn state (marked with ``boundary``) and the entries of ``cold_ids``
    (messages before the boundary) taken out of it. The root stays folded; the
    restore and repair marks of the episode the window continues stay too (its
    first message is before the window), and ``retired`` names earlier such
    episodes whose marks go cold now."""
    cold = cold_ids - {boundary.root_id}
    keep = {boundary.episode.start} if boundary.episode is not None else set()
    marks = (cold | retired) - keep
    episodes = state.episodes
    summary = state.summary
    if summary is not None:
        kept = [i for i in summary.folded if i not in cold]
        summary = summary.model_copy(update={"folded": kept})
    out = ColdState(
        folded=sorted(i for i in state.folded() if i in cold),
        stubs={k: v for k, v in state.stubs.items() if k in cold},
        pins=sorted(i for i in state.pins if i in cold),
        drops=sorted(i for i in state.drops if i in cold),
        restored=sorted(i for i in state.restored if i in cold),
    )
    if episodes is not None:
        archived = {k: v for k, v in episodes.archives.items() if set(v.ids) <= cold}
        out = out.model_copy(
            update={
                "archives": archived,
                "episodes_restored": sorted(i for i in episodes.restored if i in marks),
                "episodes_blocked": {k: v for k, v in episodes.blocked.items() if k in marks},
            }
        )
        episodes = episodes.model_copy(
            update={
                "archives": {k: v for k, v in episodes.archives.items() if k not in archived},
                "restored": [i for i in episodes.restored if i not in marks],
                "blocked": {k: v for k, v in episodes.blocked.items() if k not in marks},
            }
        )
    hot = state.model_copy(
        update={
            "summary": summary,
            "stubs": {k: v for k, v in state.stubs.items() if k not in cold},
            "pins": [i for i in state.pins if i not in cold],
            "drops": [i for i in state.drops if i not in cold],
            "restored": [i for i in state.restored if i not in cold],
            "episodes": episodes,
            "boundary": boundary,
        }
    )
    return hot, out


def merge_cold(cold: ColdState, more: ColdState) -> ColdState:
    """``cold`` plus entries newly moved out by an advancing boundary."""
    return ColdState(
        folded=with_ids(cold.folded, more.folded),
        stubs={**cold.stubs, **more.stubs},
        pins=with_ids(cold.pins, more.pins),
        drops=with_ids(cold.drops, more.drops),
        restored=with_ids(cold.restored, more.restored),
        archives={**cold.archives, **more.archives},
        episodes_restored=with_ids(cold.episodes_restored, more.episodes_restored),
        episodes_blocked={**cold.episodes_blocked, **more.episodes_blocked},
    )


def whole_state(hot: ContextState, cold: ColdState) -> ContextState:
    """The full state (no boundary) for an assembly over the whole active path."""
    summary = hot.summary
    if summary is not None:
        summary = summary.model_copy(update={"folded": with_ids(summary.folded, cold.folded)})
    episodes = hot.episodes
    if episodes is not None:
        episodes = episodes.model_copy(
            update={
                "archives": {**cold.archives, **episodes.archives},
                "restored": with_ids(episodes.restored, cold.episodes_restored),
                "blocked": {**cold.episodes_blocked, **episodes.blocked},
            }
        )
    return hot.model_copy(
        update={
            "summary": summary,
            "stubs": {**cold.stubs, **hot.stubs},
            "pins": with_ids(hot.pins, cold.pins),
            "drops": with_ids(hot.drops, cold.drops),
            "restored": with_ids(hot.restored, cold.restored),
            "episodes": episodes,
            "boundary": None,
        }
    )


def copied_state(
    state: ContextState,
    ids: dict[str, str],
    seqs: dict[str, int],
    reseq: Callable[[int], int] | None = None,
) -> ContextState:
    """The state of a session copy: entries of copied messages only, under their new
    ids (``ids`` old → new, ``seqs`` new id → seq). ``reseq`` maps a log position of
    the source to the copy's (hard resets keep their place). Loop guards start fresh."""

    def keep(values: list[str]) -> list[str]:
        return sorted(ids[i] for i in values if i in ids)

    summary = state.summary
    if summary is not None:
        folded = keep(summary.folded)
        summary = (
            summary.model_copy(
                update={"folded": folded, "through_seq": max(seqs[i] for i in folded)}
            )
            if folded
            else None
        )
    episodes = state.episodes
    if episodes is not None:
        archives = {
            ids[k]: v.model_copy(update={"ids": [ids[i] for i in v.ids]})
            for k, v in episodes.archives.items()
            if all(i in ids for i in v.ids)
        }
        episodes = EpisodeState(
            archives=archives,
            restored=keep(episodes.restored),
            blocked={ids[k]: v for k, v in episodes.blocked.items() if k in ids},
            resets=sorted({reseq(r) for r in episodes.resets}) if reseq else [],
        )
    return ContextState(
        pins=keep(state.pins),
        drops=keep(state.drops),
        stubs={ids[k]: v for k, v in state.stubs.items() if k in ids},
        restored=keep(state.restored),
        summary=summary,
        hidden_tools=list(state.hidden_tools),
        compactions=state.compactions,
        episodes=episodes,
    )
