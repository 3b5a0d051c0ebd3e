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
    ``blocked`` ones were made non-archivable by a repair (key → why)."""

    archives: dict[str, ArchiveEntry] = Field(default_factory=dict)
    restored: list[str] = Field(default_factory=list)
    blocked: dict[str, str] = Field(default_factory=dict)


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

    @model_serializer(mode="wrap")
    def _without_empty_episodes(self, handler: SerializerFunctionWrapHandler) -> Any:
        """Leave ``episodes`` out of the JSON when there is none: with episodes off
        nothing about them is persisted, and older states keep their exact bytes."""
        data = handler(self)
        if isinstance(data, dict) and data.get("episodes", 0) is None:
            del data["episodes"]
        return data

    def folded(self) -> frozenset[str]:
        return frozenset(self.summary.folded) if self.summary else frozenset()


def with_ids(
    ids: list[str], add: list[str] | tuple[str, ...] = (), remove: frozenset[str] = frozenset()
) -> list[str]:
    """``ids`` plus ``add`` minus ``remove``, deduplicated and sorted (stable JSON)."""
    return sorted((set(ids) | set(add)) - remove)
