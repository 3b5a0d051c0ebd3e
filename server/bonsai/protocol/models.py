"""Wire models: the params and results of every ``bonsai/*`` method.

camelCase on the wire, snake_case in Python. Unknown fields are rejected so a
client typo is a clear ``-32602`` naming the field instead of a silent no-op.
These are wire types only; the daemon converts to domain types at one boundary.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, cast, get_args

from pydantic import BaseModel, ConfigDict, Field, RootModel
from pydantic.alias_generators import to_camel


class Wire(BaseModel):
    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True)

    def dump(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


class Empty(Wire):
    """No fields."""


# ---------------------------------------------------------------- daemon
class ClientSettings(Wire):
    """Provider settings from the client's own environment or editor settings.

    Sent with ``bonsai/session/create`` and ``bonsai/chat/send``; they apply to
    that session from its next turn on (each send replaces what the previous
    one sent). Keys stay in the daemon's memory for that session only: never
    logged, stored or echoed back."""

    provider: str | None = Field(default=None, max_length=64)
    model: str | None = Field(default=None, max_length=256)
    base_url: str | None = Field(default=None, max_length=2048)
    fast_model: str | None = Field(default=None, max_length=256)
    api_keys: dict[str, str] = Field(
        default_factory=dict,
        max_length=8,
        description="provider name → API key (only providers whose key the client has)",
    )
    source: str = Field(
        default="client",
        max_length=200,
        description="who sent these, for `bonsai status` (e.g. `bonsai chat (pid 412)`)",
    )
    names: list[str] = Field(
        default_factory=list,
        max_length=16,
        description="the variables or settings they came from (names only, never values)",
    )


class ProviderChoice(Wire):
    """The provider a session (or the daemon by default) uses, and where each figure came from."""

    provider: str
    model: str
    base_url: str | None = None
    key: str = Field(description="where the API key comes from, or `none needed` / `missing`")
    sources: dict[str, str] = Field(
        default_factory=dict, description="field → where its value came from"
    )


class SessionProviderInfo(Wire):
    session_id: str
    title: str | None = None
    workspace: str
    choice: ProviderChoice


class DaemonStatusResult(Wire):
    version: str
    pid: int
    uptime_s: float
    clients: int
    sessions: int
    db_path: str
    provider: ProviderChoice | None = Field(
        default=None, description="what a session without client settings uses"
    )
    session_providers: list[SessionProviderInfo] = Field(
        default_factory=list, description="sessions whose clients sent their own settings"
    )
    views: str = Field(
        default="", description="where read-only views are computed (the view process, or why not)"
    )
    heavy_modules: list[str] = Field(
        default_factory=list,
        description="heavy libraries the daemon has imported so far (each when first needed)",
    )
    tokenizers_loaded: list[str] = Field(
        default_factory=list,
        description="tokenizers loaded so far (tiktoken:o200k_base), each at a first count",
    )


# ---------------------------------------------------------------- sessions
Role = Literal["system", "user", "assistant", "tool"]


class SessionInfo(Wire):
    session_id: str
    title: str
    workspace: str
    created_at: float
    updated_at: float
    message_count: int


class WireToolCall(Wire):
    id: str
    name: str
    arguments: str


class RecalledNote(Wire):
    """Background data the daemon added to a user turn (recalled memory, related
    history, a retry's reflection): shown as a chip on the turn, never as the
    user's words. ``text`` is the readable content, without the framing markup."""

    sources: list[Literal["memory", "history", "reflection", "data"]]
    titles: list[str] = Field(default_factory=list)
    text: str


class WireMessage(Wire):
    message_id: str
    role: Role
    content: str
    created_at: float
    tool_calls: list[WireToolCall] | None = None
    tool_call_id: str | None = None
    name: str | None = None
    status: Literal["complete", "interrupted", "error"] | None = None
    recalled: RecalledNote | None = None  # set when this user-lane message is background data


class SessionRef(Wire):
    session_id: str = Field(min_length=1, max_length=128)


class SessionCreateParams(Wire):
    workspace: str = Field(min_length=1, max_length=4096)
    title: str | None = Field(default=None, max_length=512)
    client: ClientSettings | None = Field(
        default=None,
        description="the client's provider settings; when given, a session is created only "
        "if they can work (else a configuration error says what to fix)",
    )


class SessionCreateResult(Wire):
    session_id: str


class SessionForkParams(Wire):
    session_id: str = Field(min_length=1, max_length=128)
    node_id: str | None = Field(
        default=None,
        max_length=128,
        description="copy the active path up to this node (the end of its step); "
        "default: the active leaf",
    )
    title: str | None = Field(default=None, max_length=512)


class SessionForkResult(Wire):
    session: SessionInfo


class SessionListParams(Wire):
    workspace: str | None = None


class SessionListResult(Wire):
    sessions: list[SessionInfo]


class SessionAttachResult(Wire):
    session: SessionInfo
    messages: list[WireMessage]


class SessionRenameParams(SessionRef):
    title: str = Field(min_length=1, max_length=512)


class SessionAppendParams(SessionRef):
    role: Role
    content: str = Field(max_length=8 * 1024 * 1024)


class SessionAppendResult(Wire):
    message: WireMessage


class SessionImportParams(Wire):
    path: str = Field(min_length=1, max_length=4096)
    format: Literal[
        "auto",
        "mini-swe-agent",
        "claude-code",
        "codex",
        "openhands",
        "swe-agent",
        "aider",
        "openai",
        "anthropic",
    ] = "auto"
    run: int = Field(default=0, ge=0)
    workspace: str = Field(min_length=1, max_length=4096)


class SessionImportResult(Wire):
    session_id: str
    format: str
    messages: int
    runs: int
    run: int = 0
    title: str = ""
    warnings: list[str] = Field(default_factory=list)


class SessionEventParams(Wire):
    session_id: str
    kind: Literal["messageAppended", "titleChanged", "deleted"]
    message: WireMessage | None = None
    title: str | None = None


# ---------------------------------------------------------------- config
class ConfigGetParams(Wire):
    workspace: str | None = None


class LastAssembly(Wire):
    """The newest request built for a workspace: whose, how full, what it held."""

    session_id: str
    used: int
    usable: int
    percent: float
    system_parts: list[str]
    messages: int
    tools: list[str]
    prefix_hash: str


class ConfigGetResult(Wire):
    effective: dict[str, Any]
    overrides: dict[str, Any]
    path: str
    problems: list[str] = Field(default_factory=list)
    available_tools: list[str] = Field(default_factory=list)  # names valid in tools.hidden
    last_assembly: LastAssembly | None = None


class ConfigChangedParams(Wire):
    problems: list[str] = Field(default_factory=list)


class ConfigSetParams(Wire):
    key: str = Field(min_length=1, max_length=256, description="dotted key, e.g. context.preset")
    value: Any = None
    workspace: str | None = None
    scope: Literal["user", "project"] = "user"


class ConfigPresetParams(Wire):
    preset: Literal["keep", "balanced", "save"] | None = None
    smol: bool | None = None
    workspace: str | None = None


# ---------------------------------------------------------------- chat
class ChatSendParams(SessionRef):
    text: str = Field(min_length=1, max_length=1024 * 1024)
    client: ClientSettings | None = Field(
        default=None, description="the client's provider settings for this turn and the next"
    )


class ChatSendResult(Wire):
    turn_id: str


class ChatCancelParams(SessionRef):
    turn_id: str | None = None


class ChatCancelResult(Wire):
    cancelled: bool


class UsageInfo(Wire):
    input_tokens: int
    output_tokens: int
    cached_input_tokens: int = 0
    cache_creation_tokens: int = 0


def _kind_required(schema: dict[str, Any]) -> None:
    """``kind`` has a default in Python but is always on the wire: required in the schema,
    so the generated TypeScript and Lua types narrow on it."""
    schema["required"] = ["kind", *(f for f in schema.get("required", []) if f != "kind")]


class ChatEventBody(Wire):
    """What a turn emits, before the runtime stamps it with session, turn and seq."""

    model_config = ConfigDict(json_schema_extra=_kind_required)


class DeltaEvent(ChatEventBody):
    """Streamed reply text."""

    kind: Literal["delta"] = "delta"
    text: str


class ToolCallEvent(ChatEventBody):
    """The model called a tool; ``args`` is its parsed arguments (or the raw text)."""

    kind: Literal["toolCall"] = "toolCall"
    tool_call_id: str
    name: str
    args: Any


class ToolResultEvent(ChatEventBody):
    """A tool call's result as the model sees it (at most 4,000 characters here)."""

    kind: Literal["toolResult"] = "toolResult"
    tool_call_id: str
    name: str
    result: str
    is_error: bool


class UsageEvent(ChatEventBody):
    """What the provider reported for one model step."""

    kind: Literal["usage"] = "usage"
    usage: UsageInfo


class DoneEvent(ChatEventBody):
    """The turn ended normally."""

    kind: Literal["done"] = "done"


class ErrorEvent(ChatEventBody):
    """The turn ended on an error or a guard; ``message`` says which (a client that does not
    know ``cancelled`` gets its cancel as this, with ``message`` "turn cancelled")."""

    kind: Literal["error"] = "error"
    message: str


class CancelledEvent(ChatEventBody):
    """The turn ended on a cancel (``bonsai/chat/cancel``, from any client): not an error;
    its partial reply is kept, marked interrupted. Sent to the clients whose
    ``initializationOptions.chatEventKinds`` name it; the others get an ``error``."""

    kind: Literal["cancelled"] = "cancelled"


class NoticeEvent(ChatEventBody):
    """Something the user should know about this turn (e.g. the server cannot call tools)."""

    kind: Literal["notice"] = "notice"
    message: str


class RetryEvent(ChatEventBody):
    """The provider backs off: ``text`` says why, the next delta, done or error ends it."""

    kind: Literal["retry"] = "retry"
    text: str
    retry_in_s: float  # the wait before the next attempt
    attempt: int  # the attempt that failed (0 the first)


ChatEvent = Annotated[
    DeltaEvent
    | ToolCallEvent
    | ToolResultEvent
    | UsageEvent
    | DoneEvent
    | ErrorEvent
    | CancelledEvent
    | NoticeEvent
    | RetryEvent,
    Field(discriminator="kind"),
]


# the chat event kinds added after the first clients; a client names those it shows in
# initialize's initializationOptions.chatEventKinds, the others get the older shape
LATER_CHAT_EVENT_KINDS = ("cancelled",)


class ChatEventEnvelope(Wire):
    """What every chat event carries: its session, its turn, its place in the session's stream."""

    session_id: str
    turn_id: str
    seq: int


class ChatDeltaParams(DeltaEvent, ChatEventEnvelope):
    """``delta``: streamed reply text."""


class ChatToolCallParams(ToolCallEvent, ChatEventEnvelope):
    """``toolCall``: the model called a tool; ``args`` is its parsed arguments (or the raw text)."""


class ChatToolResultParams(ToolResultEvent, ChatEventEnvelope):
    """``toolResult``: a tool call's result as the model sees it (at most 4,000 characters
    here)."""


class ChatUsageParams(UsageEvent, ChatEventEnvelope):
    """``usage``: what the provider reported for one model step."""


class ChatDoneParams(DoneEvent, ChatEventEnvelope):
    """``done``: the turn ended normally."""


class ChatErrorParams(ErrorEvent, ChatEventEnvelope):
    """``error``: the turn ended on an error or a guard; ``message`` says which."""


class ChatCancelledParams(CancelledEvent, ChatEventEnvelope):
    """``cancelled``: the turn ended on a cancel, not an error (an older client gets it as an
    ``error`` "turn cancelled")."""


class ChatNoticeParams(NoticeEvent, ChatEventEnvelope):
    """``notice``: something the user should know about this turn (the server cannot call
    tools)."""


class ChatRetryParams(RetryEvent, ChatEventEnvelope):
    """``retry``: the provider backs off; ``text`` says why; the next delta, done or error
    ends it."""


ChatEventWire = Annotated[
    ChatDeltaParams
    | ChatToolCallParams
    | ChatToolResultParams
    | ChatUsageParams
    | ChatDoneParams
    | ChatErrorParams
    | ChatCancelledParams
    | ChatNoticeParams
    | ChatRetryParams,
    Field(discriminator="kind"),
]


class ChatEventParams(RootModel[ChatEventWire]):
    """One event of a running turn: one shape per ``kind``."""


_WIRE_OF: dict[str, type[ChatEventEnvelope]] = {
    str(member.model_fields["kind"].default): member
    for member in get_args(get_args(ChatEventWire)[0])
}


def chat_event_params(
    event: ChatEvent, *, session_id: str, turn_id: str, seq: int
) -> ChatEventWire:
    """``event`` stamped for the wire: the same fields, with its session, turn and seq."""
    wire = _WIRE_OF[event.kind](session_id=session_id, turn_id=turn_id, seq=seq, **event.__dict__)
    return cast(ChatEventWire, wire)


class ApprovalRequestParams(Wire):
    session_id: str
    turn_id: str
    tool: str
    args: dict[str, Any]
    diff: str | None = None
    approval_id: str | None = None  # matches the later bonsai/approval/resolved
    cwd: str | None = None  # where a command runs
    path: str | None = None  # the file an edit changes (workspace-relative)
    proposed: str | None = None  # the file's whole text after the edit (for a diff editor)


class ApprovalRequestResult(Wire):
    approved: bool


ApprovalOutcome = Literal["approved", "rejected", "cancelled", "expired", "unanswered"]


class ApprovalResolvedParams(Wire):
    """An approval was answered (or withdrawn): every client of the session closes it."""

    session_id: str
    turn_id: str
    approval_id: str
    tool: str
    outcome: ApprovalOutcome
    by: str  # who answered, in words ("VS Code window 3"); "" when nobody did
    yours: bool  # this client gave the answer that counted
    at: float  # unix time of the answer


# ---------------------------------------------------------------- ctx
NodeState = Literal["full", "pinned", "stubbed", "dropped", "summarized", "archived"]
Confidence = Literal["exact", "high", "low"]


class CtxGetParams(SessionRef):
    view: Literal["ledger", "wire", "turns"] = "ledger"


class CtxTotals(Wire):
    window: int
    usable: int
    used: int
    percent: float
    reserve: int
    billed_input: int
    cached_input: int
    estimated_input: int = 0  # our estimate of the last request, beside what was billed
    confidence: Confidence = "low"
    calibration_factor: float = 1.0
    window_source: str = ""  # where the window figure came from (server, config, registry, default)
    window_notes: list[str] = Field(default_factory=list)  # e.g. "unknown window: set …"
    billed_reported: bool = True  # False: the server sent no usage for the last request


class CtxNode(Wire):
    id: str
    kind: str
    section: Literal["system", "tools", "messages", "stubs", "summaries", "episodes"]
    label: str
    tokens: int
    confidence: Confidence
    state: NodeState
    reason: str = ""
    turn: int | None = None
    images: int = 0
    step: str | None = None  # a tool result's step: the assistant node that made the call


class CtxEvent(Wire):
    kind: str
    detail: str = ""
    tokens_before: int | None = None
    tokens_after: int | None = None
    prefix_hash_before: str | None = None
    prefix_hash_after: str | None = None


class CtxTurn(Wire):
    turn: int
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    estimated_tokens: int
    events: list[CtxEvent] = Field(default_factory=list)


class CtxGetResult(Wire):
    view: Literal["ledger", "wire", "turns"]
    totals: CtxTotals | None = None
    nodes: list[CtxNode] | None = None
    turns: list[CtxTurn] | None = None
    messages: list[dict[str, Any]] | None = None
    tools: list[dict[str, Any]] | None = None
    system: list[dict[str, Any]] | None = None


class CtxNodeParams(SessionRef):
    node_id: str = Field(min_length=1, max_length=256)


class CtxNodeResult(Wire):
    node: CtxNode


class CtxTextResult(Wire):
    text: str


class CtxCompactParams(SessionRef):
    preview: bool = False
    target: int | None = Field(default=None, gt=0)
    mode: Literal["provider", "deterministic", "fallback"] = "provider"


class CtxCompactResult(Wire):
    preview: bool
    before: int
    after: int
    events: list[CtxEvent]


class CtxChangedParams(Wire):
    session_id: str
    percent: float
    used: int
    usable: int
    events: list[CtxEvent] | None = Field(
        default=None,
        description="what the pipeline did to the request just built (stubs, folds, archives)",
    )


# ---------------------------------------------------------------- episodes
class EpisodeInfo(Wire):
    number: int
    title: str
    start_message_id: str | None = None
    end_message_id: str | None = None
    state: Literal["open", "closed", "archived", "restored"]
    tokens_before: int = 0
    tokens_after: int = 0
    archivable: bool = True  # false: open, restored, or made non-archivable by a repair
    note: str = ""  # why it is not archived now (empty when nothing holds it)


class EpisodesListResult(Wire):
    episodes: list[EpisodeInfo]


class EpisodeRef(SessionRef):
    number: int = Field(ge=1)


ResetKind = Literal["clear", "start", "review"]


class SessionResetParams(SessionRef):
    """A hard reset typed in the chat (``/clear``, ``/start``, ``/review``)."""

    kind: ResetKind


class SessionResetResult(Wire):
    """``episode``: the number of the episode the reset closed; absent when the reset
    changed nothing (``message`` says why)."""

    episode: int | None = None
    kind: ResetKind
    message: str


class EpisodesRecallParams(SessionRef):
    query: str | None = Field(default=None, max_length=4096)
    episode: int | None = Field(default=None, ge=1)
    cursor: int = Field(default=0, ge=0)
    limit: int = Field(default=5, ge=1, le=50)


class RecallHit(Wire):
    message_id: str
    role: str
    episode: int | None = None
    score: float
    snippet: str
    text: str
    # the user question an answer or tool result answered (retrieval.mandatory_context)
    question_id: str | None = None
    question: str | None = None


class EpisodesRecallResult(Wire):
    results: list[RecallHit]
    next_cursor: int | None = None


# ---------------------------------------------------------------- memory
Tier = Literal["user", "project"]


class MemoryEntryInfo(Wire):
    name: str
    tier: Tier
    type: str
    description: str
    path: str
    enabled: bool = True


class MemoryScope(Wire):
    workspace: str | None = None


class MemoryListResult(Wire):
    entries: list[MemoryEntryInfo]
    issues: list[str] = Field(default_factory=list)
    embeddings: str = "off"
    advisory: str | None = None


class MemoryNameParams(MemoryScope):
    name: str = Field(min_length=1, max_length=64)


class MemoryGetResult(Wire):
    entry: MemoryEntryInfo
    body: str


class MemoryAddParams(MemoryScope):
    fact: str = Field(min_length=1, max_length=4096)
    tier: Tier = "user"
    name: str | None = Field(default=None, max_length=64)


class MemoryEditParams(MemoryNameParams):
    body: str | None = Field(default=None, max_length=4096)
    description: str | None = Field(default=None, max_length=160)


class MemoryEntryResult(Wire):
    entry: MemoryEntryInfo


class MemorySetEnabledParams(MemoryNameParams):
    enabled: bool


class MemorySearchParams(MemoryScope):
    query: str = Field(min_length=1, max_length=4096)
    limit: int = Field(default=10, ge=1, le=100)


class MemoryLanes(Wire):
    bm25: float | None = None
    embedding: float | None = None


class MemorySearchHit(Wire):
    name: str
    tier: Tier
    score: float
    lanes: MemoryLanes


class MemorySearchResult(Wire):
    results: list[MemorySearchHit]
    embeddings: str


class MemorySuggestionParams(Wire):
    session_id: str
    facts: list[str]


# ---------------------------------------------------------------- repo map
class RepomapGetParams(Wire):
    session_id: str | None = None
    workspace: str | None = None
    tokens: int | None = Field(default=None, gt=0, le=65_536)
    mentions: str | None = Field(default=None, max_length=65_536)


class RepomapFile(Wire):
    path: str
    rank: float
    tags: list[str]


class RepomapGetResult(Wire):
    text: str
    files: list[RepomapFile]
    tokens: int
    built_ms: float
    cached: bool


class HandoffSuggestedParams(Wire):
    session_id: str
    percent: float
    handoff: str


# ---------------------------------------------------------------- conversation tree
TreeNodeKind = Literal["question", "answer", "tool_result", "system"]


class TreeAttachInfo(Wire):
    """Where the attachment rule puts a question (design 003)."""

    target: str | None = None  # the answer to move under; None: a new branch under the root
    score: float  # 0.5 · term coverage + 0.5 · similarity, in [0, 1]
    reason: str
    term: str | None = None  # the specific term that decided it
    similarity: Literal["model2vec", "lexical"]  # how similarity was measured
    placed: bool  # the question already sits there


class TreeNodeInfo(Wire):
    node_id: str
    parent_id: str | None = None
    kind: TreeNodeKind
    state: Literal["visible", "hidden"]
    label: str
    seq: int
    tokens: int  # this message
    branch_tokens: int  # the path root → this node
    confidence: Confidence
    on_active_path: bool = False
    attach: TreeAttachInfo | None = None  # questions, unless tree.attach is off


class TreeGetResult(Wire):
    nodes: list[TreeNodeInfo]
    active_leaf: str | None = None
    fork_point: str | None = None  # the next user message attaches here
    active_path: list[str]
    recycle_bin: list[str]
    path_tokens: int  # what the active path costs (messages only)
    attach_mode: Literal["suggest", "topic", "off"] = "suggest"


class TreeNodeParams(SessionRef):
    node_id: str = Field(min_length=1, max_length=256)


class TreeReparentParams(TreeNodeParams):
    parent_id: str = Field(min_length=1, max_length=256)


class TreeAttachParams(TreeNodeParams):
    parent_id: str | None = Field(None, min_length=1, max_length=256)  # None: under the root


class TreeChangedParams(Wire):
    session_id: str
    op: str  # fork, jump, reparent, hide, restore, attach


class TreeCompareParams(SessionRef):
    a: str = Field(min_length=1, max_length=256)
    b: str = Field(min_length=1, max_length=256)


class TreeCompareMessage(Wire):
    node_id: str
    kind: TreeNodeKind
    role: Role
    text: str
    tokens: int


class TreeCompareSide(Wire):
    leaf_id: str
    messages: list[TreeCompareMessage]  # after the common ancestor, in order
    tokens: int  # those messages
    path_tokens: int  # the whole path root → leaf


class TreeCompareResult(Wire):
    ancestor_id: str | None = None
    a: TreeCompareSide
    b: TreeCompareSide


# ---------------------------------------------------------------- rules
RuleSource = Literal["user", "detected"]


class RulesScope(Wire):
    """Whose rules: a session's workspace, or a workspace directly (one of the two)."""

    session_id: str | None = Field(default=None, min_length=1, max_length=128)
    workspace: str | None = Field(default=None, min_length=1, max_length=4096)


class RuleInfo(Wire):
    id: str
    text: str
    source: RuleSource
    enabled: bool
    created: float  # unix time
    origin: str | None = None  # the user message a detected rule came from


class RulesListResult(Wire):
    workspace: str
    rules: list[RuleInfo]


class RulesAddParams(RulesScope):
    text: str = Field(max_length=4096)  # the rule limit (300) is checked with a clear message


class RulesEditParams(Wire):
    id: str = Field(min_length=1, max_length=128)
    text: str | None = Field(default=None, max_length=4096)
    enabled: bool | None = None


class RulesIdParams(Wire):
    id: str = Field(min_length=1, max_length=128)


class RuleResult(Wire):
    rule: RuleInfo


class RulesChangedParams(Wire):
    workspace: str
    rules: list[RuleInfo]
    change: Literal["added", "edited", "deleted", "detected"]


# ---------------------------------------------------------------- reflection
class ReflectGrade(Wire):
    kind: Literal["tests_failing", "tool_error", "user_rejected"]
    severity: Literal["low", "medium", "high"]
    evidence: list[str]  # lines quoted from the turn, never invented


class ReflectOfferedParams(Wire):
    session_id: str
    offer_id: str
    question_id: str  # the failed question; a retry is its sibling
    grade: ReflectGrade
    reflection: str
    auto_retry: bool = False  # the daemon is retrying on its own (no tool needs approval)


class ReflectOfferParams(SessionRef):
    offer_id: str = Field(min_length=1, max_length=64)
