"""The settings tree: every knob of bonsai, fully defaulted and typed.

Pure data (pydantic, no I/O). Loading, merging, environment overrides and hot
reload live in ``bonsai.services.config``. Each area owns one section class;
fractions are of the *usable* window (model context − output reserve).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

ProviderName = Literal["openai", "anthropic", "deepseek", "openai-compatible", "sim"]
ToolPolicy = Literal["ask", "allow", "deny"]
PresetName = Literal["keep", "balanced", "save"]


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_assignment=True)


class ModelInfo(Section):
    """One row of the model registry (users can add rows in config)."""

    family: Literal["openai", "anthropic", "deepseek", "qwen", "other"] = "other"
    context_window: int = Field(128_000, gt=0)
    max_output: int = Field(16_000, gt=0)
    tokenizer: str | None = None  # e.g. "o200k_base", "cl100k_base", path to tokenizer.json
    price_input: float = 0.0  # USD per million tokens
    price_cached_input: float = 0.0
    price_output: float = 0.0
    price_cache_write: float | None = None  # None: cache writes cost price_input
    cache_ttl_s: float | None = Field(None, gt=0)  # idle prefix-cache lifetime; None: the family's


class ProviderSettings(Section):
    provider: ProviderName = "openai"  # which wire format and defaults (sim: the local simulator)
    model: str = "gpt-4o-mini"  # the model of every agent step
    fast_model: str | None = None  # summaries and reflections; None: the main model
    base_url: str | None = None  # None: the provider's public endpoint
    api_key: SecretStr | None = None
    connect_timeout_s: float = 10.0  # give up connecting after this
    read_timeout_s: float = 120.0  # give up when the stream is silent this long
    max_retries: int = 4  # 429 and 5xx are retried this many times
    retry_base_delay_s: float = Field(0.5, ge=0)  # first backoff; doubles each retry
    retry_max_delay_s: float = Field(20.0, ge=0)  # backoff ceiling
    retry_after_cap_s: float = Field(60.0, ge=0)  # longer retry-after: fail instead of waiting
    discover: bool = True  # openai-compatible: ask the server for the model's window and tools
    step_budget_s: float = Field(
        600.0, gt=0
    )  # a model step that has not finished after this long is cancelled (the turn ends clearly)
    tool_protocol: Literal["auto", "native", "text"] = (
        "auto"  # text: tools in the prompt, calls read from the reply; auto: text where tools fail
    )
    models: dict[str, ModelInfo] = Field(
        default_factory=dict
    )  # extra model registry rows (window, prices, tokenizer)


class ToolOutputSettings(Section):
    max_chars: int = (
        24_000  # a longer tool output is cut (head and tail kept) before the model sees it
    )
    head_fraction: float = 0.7  # share of the cut output taken from its head
    persist_raw: bool = True  # keep the uncut output for read_tool_output
    raw_cap_bytes: int = 2 * 1024 * 1024  # largest uncut output kept


_DEFAULT_POLICY: dict[str, ToolPolicy] = {"edit_file": "ask", "write_file": "ask", "bash": "ask"}


class ToolSettings(Section):
    policy: dict[str, ToolPolicy] = Field(
        default_factory=lambda: dict(_DEFAULT_POLICY)
    )  # per tool: ask (approval), allow or deny
    bash_timeout_s: float = 120.0  # a shell command is killed after this
    hidden: list[str] = Field(
        default_factory=list
    )  # tools left out of requests (names are checked)


class ContextSettings(Section):
    """How the window is assembled and managed (fractions of the usable window)."""

    preset: PresetName = "balanced"  # keep / balanced / save: sets the thresholds below at once
    operator_suffix: str = ""  # appended to the system message, before the volatile tail
    smol: bool = False  # small-model profile: lower thresholds, fewer tools, no repo map
    output_reserve: int = 16_000  # tokens kept free for the reply; usable = window - this
    output_reserve_fraction: float = Field(
        0.25, gt=0, le=0.9
    )  # the reserve (and max_tokens) never exceeds this share of the window
    gc_trigger: float = 0.40  # continuous GC may stub old outputs above this share
    compact_trigger: float = 0.60  # compaction runs above this share
    compact_target: float = 0.15  # compaction reclaims down to this share
    min_rewrite_tokens: int = 8_000  # a stub batch must save this many tokens ...
    min_rewrite_fraction: float = (
        0.08  # ... or this share of the request, else nothing is rewritten
    )
    min_stub_tokens: int = Field(200, ge=0)  # smaller tool outputs are not worth a stub
    min_rewrite_payback: float = Field(2.0, ge=0)  # saved per re-sent token at 0.1x reads
    payback_horizon: float = Field(
        0.5, ge=0
    )  # below gc_trigger: take a big batch that breaks even within this share of the calls so far
    keep_recent_groups: int = 3  # last message groups never stubbed or folded
    keep_user_messages: int = 2  # latest user messages never folded
    steering_cap_bytes: int = 16 * 1024  # AGENTS.md / CLAUDE.md and friends are cut past this
    summary_mode: Literal["provider", "deterministic"] = (
        "provider"  # who writes the rolling summary (fast model, or fixed headings)
    )
    background_summary: bool = False  # start the summary early, off the turn
    soft_fraction: float = 0.80  # share at which a background summary starts
    recitation: bool = False  # re-pin open tasks as a <plan> block after a summary
    reflect_above_tokens: int = 4_000  # a longer rolling summary is condensed (reflect pass)
    summary_fraction: float = Field(0.018, gt=0, le=1)  # summary size: this share of usable
    summary_trace_share: float = Field(0.5, ge=0, lt=1)  # share for folded views' traces (0: none)
    handoff_nudge: bool = False  # suggest a fresh session with a handoff near the limit
    handoff_fraction: float = 0.90  # share at which the handoff is suggested
    retrieval_reinjection: bool = False  # older name of retrieval.auto_inject (either turns it on)
    retrieval_min_score: float = 0.5  # auto-injected history below this score is left out
    retrieval_max_results: int = 3  # at most this many auto-injected hits


class EpisodeSettings(Section):
    enabled: bool = True  # segment the session into task episodes and archive closed ones
    card_max_chars: int = Field(1_600, ge=500, le=1_600)  # an archived episode's card


class MemorySettings(Section):
    enabled: bool = True  # recall project and user memory each turn
    embeddings: Literal["auto", "off"] = (
        "auto"  # auto: model2vec vectors when a model is on disk; off: BM25 only
    )
    model_path: str | None = None  # a local model2vec folder
    model_name: str = "minishlab/potion-base-8M"  # hub name, used only with allow_download
    cosine_floor: float = 0.35  # vector hits below this similarity are dropped
    max_entries_per_turn: int = 3  # memory entries recalled per turn
    max_tokens_per_turn: int = 500  # token cap of the recalled-memory note
    promotion: Literal["off", "suggest", "auto"] = (
        "off"  # lift durable facts from folded history into memory
    )
    allow_download: bool = False  # one-time hub download of model_name when no local model


class RepoMapSettings(Section):
    enabled: bool = True  # the ranked repository map in the cacheable prefix
    tokens: int = 1_024  # map budget when files are in the conversation
    tokens_no_files: int = 2_048  # map budget before any file is
    max_file_bytes: int = Field(1_000_000, gt=0)  # larger files are left out
    extra_exclude_dirs: list[str] = Field(default_factory=list)  # added to the built-in list
    stability_top_k: int = Field(10, ge=1)  # leading files whose change re-renders
    stability_drift: float = Field(0.35, ge=0.0, le=2.0)  # rank drift that re-renders
    debounce_s: float = Field(0.25, ge=0.0)  # watcher: quiet time before an update
    workers: int = Field(0, ge=0)  # parsers for big builds (this process too); 0 = per core


class RetrievalSettings(Section):
    """How folded history is offered back to the model (design 003)."""

    hint: bool = True  # one line saying folded history can be fetched
    hint_above_tokens: int = Field(12_000, ge=0)  # send the hint once the conversation is this big
    auto_inject: bool = False  # push the whole retrieval block every turn instead of the hint
    # a retrieved answer or tool result comes with the user question it answered
    mandatory_context: bool = True
    # current text of related files the session read: auto (whole when it fits
    # excerpt_above_tokens, else the head), digest (head), full, off
    file_region: Literal["auto", "digest", "full", "off"] = "auto"
    # retrieved texts up to this size come back as they are; longer: a verbatim excerpt
    excerpt_above_tokens: int = Field(800, ge=1)
    # longer still: one line (what it is, line count) with the recall call for the exact text
    pointer_above_tokens: int = Field(3_000, ge=1)


class DaemonSettings(Section):
    """Per-workspace services the daemon keeps alive (read from the user file and environment)."""

    max_workspace_services: int = Field(8, ge=1)  # per kind (memory, repo map); LRU released first
    service_idle_s: float = Field(900.0, gt=0)  # an unused workspace service is released after this
    backup_interval_s: float = Field(
        600.0, gt=0
    )  # back the database up this often while it changes
    backups_kept: int = Field(5, ge=1)  # rolling backups kept in $BONSAI_HOME/backups


class TreeSettings(Section):
    """Where new questions attach in the conversation tree; reflection on failed turns."""

    attach: Literal["suggest", "topic", "off"] = "suggest"  # suggest: shown, the user moves it
    auto_reflect: bool = True  # grade a failed turn, offer a retry with a reflection


class Settings(Section):
    providers: ProviderSettings = Field(default_factory=ProviderSettings)
    tool_output: ToolOutputSettings = Field(default_factory=ToolOutputSettings)
    tools: ToolSettings = Field(default_factory=ToolSettings)
    context: ContextSettings = Field(default_factory=ContextSettings)
    episodes: EpisodeSettings = Field(default_factory=EpisodeSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    repomap: RepoMapSettings = Field(default_factory=RepoMapSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    tree: TreeSettings = Field(default_factory=TreeSettings)
    daemon: DaemonSettings = Field(default_factory=DaemonSettings)
