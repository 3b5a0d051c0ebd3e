"""The data the context pipeline takes and returns.

Pure data: no I/O, no clock. The daemon builds an :class:`AssembleInput` each
model call (system parts gathered from disk, the session log as items, the
persisted :class:`~bonsai.core.context.context_state.ContextState`), calls
``assemble`` and sends ``Assembly.system`` + ``Assembly.messages`` +
``Assembly.tools``. Ledger rows map one to one onto ``bonsai/ctx/*`` nodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, model_validator

from bonsai.core.context.context_state import ContextState
from bonsai.core.context.memo import AssemblyMemo
from bonsai.core.context.pricing import Pricing
from bonsai.domain import Message
from bonsai.settings import ContextSettings, EpisodeSettings

Confidence = Literal["exact", "high", "low"]
Section = Literal["system", "tools", "messages", "stubs", "summaries", "episodes"]
NodeState = Literal["full", "pinned", "stubbed", "dropped", "summarized", "archived"]
ON_WIRE_STATES: frozenset[str] = frozenset({"full", "pinned", "stubbed", "summarized", "archived"})
VOLATILE_ID = "sys:volatile"
VOLATILE_HEADING = "## Volatile state"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class CountLike(Protocol):
    """What a token count must offer: ``bonsai.services.tokens.Count`` satisfies it."""

    @property
    def tokens(self) -> int: ...

    @property
    def confidence(self) -> Confidence: ...


@runtime_checkable
class TokenCounter(Protocol):
    """Counts tokens for one model; ``bonsai.services.tokens.TokenCounter`` satisfies it."""

    def count_text(self, text: str) -> CountLike: ...

    def count_message(self, message: Message) -> CountLike: ...

    def count_tools(self, tools: Sequence[dict[str, Any]]) -> CountLike: ...


class SystemPart(_Frozen):
    """One block of the system prompt. ``cacheable=False`` only for the volatile tail."""

    id: str
    label: str
    text: str
    cacheable: bool = True


class Item(_Frozen):
    """One row of the session log: ``id`` is the message id, ``turn`` the user turn."""

    id: str
    seq: int
    turn: int
    message: Message


class Budget(_Frozen):
    """The model's window and the output reserve; requests must fit ``usable``."""

    window: int = Field(gt=0)
    reserve: int = Field(ge=0)

    @model_validator(mode="after")
    def _reserve_below_window(self) -> Budget:
        if self.reserve >= self.window:
            raise ValueError(
                f"output reserve ({self.reserve}) must be smaller than the window ({self.window})"
            )
        return self

    @property
    def usable(self) -> int:
        return self.window - self.reserve


class LedgerRow(_Frozen):
    """One node of the ledger (maps 1:1 onto the wire ``CtxNode``). ``tokens`` is
    what the node costs on the wire now; for ``dropped`` rows it is the original
    size (they are not sent). An archived episode is one card row (section
    ``episodes``, state ``archived``, the card's cost) and its messages, also
    ``archived``, at 0 tokens like folded messages (their reason quotes the size)."""

    id: str
    kind: str
    section: Section
    label: str
    tokens: int
    confidence: Confidence
    state: NodeState
    reason: str = ""
    turn: int | None = None
    images: int = 0
    step: str | None = None  # a tool result's step: the assistant node that made the call


class Record(_Frozen):
    """What a stage did, and why (maps onto the wire ``CtxEvent``)."""

    kind: str
    node_id: str | None = None
    detail: str = ""
    tokens_before: int | None = None
    tokens_after: int | None = None
    prefix_hash_before: str | None = None
    prefix_hash_after: str | None = None

    def event(self) -> str:
        """``kind: detail`` as the replay report lists it."""
        return f"{self.kind}: {self.detail}" if self.detail else self.kind


class Totals(_Frozen):
    window: int
    usable: int
    used: int
    percent: float
    reserve: int
    confidence: Confidence


EpisodeStateName = Literal["open", "closed", "archived", "restored"]


class EpisodeRow(_Frozen):
    """One task episode of the assembled conversation (the ``/episodes`` ledger).
    ``tokens_before`` is what its messages cost in full, ``tokens_after`` what
    they cost on the wire now (the card's size when archived)."""

    number: int
    title: str
    start: str
    end: str
    messages: int
    state: EpisodeStateName
    archivable: bool
    note: str = ""
    tokens_before: int
    tokens_after: int


class Assembly(_Frozen):
    """The request to send, its ledger, and the new state to persist."""

    system: list[SystemPart]
    messages: list[Message]
    tools: list[dict[str, Any]]
    ledger: list[LedgerRow]
    totals: Totals
    records: list[Record]
    state: ContextState
    prefix_hash: str
    summary_due: bool = False  # provider mode: tier 2 wanted a model summary (see docs)
    over_budget: bool = False  # used > usable on an exact/high estimate
    episodes: list[EpisodeRow] = Field(default_factory=list)  # empty when episodes are off


class AssembleInput(BaseModel):
    """Everything one assembly needs. ``settings`` are already effective
    (preset and smol applied); ``family`` decides where the volatile tail goes."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    parts: list[SystemPart]
    tools: list[dict[str, Any]]
    items: list[Item]
    state: ContextState
    budget: Budget
    settings: ContextSettings
    family: str
    counter: TokenCounter
    turn: int
    hidden_tools: list[str] = Field(default_factory=list)
    memo: AssemblyMemo | None = None  # per-session caches kept by the caller (optional)
    episodes: EpisodeSettings | None = None  # task episodes; None: off (no tracking at all)
    pricing: Pricing | None = None  # the active model's prices; None: its family's rule
    # seconds since this session's previous model request (None: unknown or none):
    # past the pricing's TTL the provider's cache is gone and rewrites cost nothing
    idle_seconds: float | None = Field(default=None, ge=0)
