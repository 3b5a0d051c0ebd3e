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


class ProviderSettings(Section):
    provider: ProviderName = "openai"
    model: str = "gpt-4o-mini"
    fast_model: str | None = None
    base_url: str | None = None
    api_key: SecretStr | None = None
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 120.0
    max_retries: int = 4
    retry_base_delay_s: float = Field(0.5, ge=0)
    retry_max_delay_s: float = Field(20.0, ge=0)
    retry_after_cap_s: float = Field(60.0, ge=0)  # longer retry-after: fail instead of waiting
    models: dict[str, ModelInfo] = Field(default_factory=dict)


class ToolOutputSettings(Section):
    max_chars: int = 24_000
    head_fraction: float = 0.7
    persist_raw: bool = True
    raw_cap_bytes: int = 2 * 1024 * 1024


_DEFAULT_POLICY: dict[str, ToolPolicy] = {"edit_file": "ask", "write_file": "ask", "bash": "ask"}


class ToolSettings(Section):
    policy: dict[str, ToolPolicy] = Field(default_factory=lambda: dict(_DEFAULT_POLICY))
    bash_timeout_s: float = 120.0
    hidden: list[str] = Field(default_factory=list)


class ContextSettings(Section):
    """How the window is assembled and managed (fractions of the usable window)."""

    preset: PresetName = "balanced"
    operator_suffix: str = ""  # appended to the system message, before the volatile tail
    smol: bool = False
    output_reserve: int = 16_000
    gc_trigger: float = 0.75
    compact_trigger: float = 0.95
    compact_target: float = 0.50
    min_rewrite_tokens: int = 8_000
    min_rewrite_fraction: float = 0.08
    min_stub_tokens: int = Field(200, ge=0)  # smaller tool outputs are not worth a stub
    min_rewrite_payback: float = Field(2.0, ge=0)  # tokens saved per token re-sent uncached
    keep_recent_groups: int = 3
    keep_user_messages: int = 2
    steering_cap_bytes: int = 16 * 1024
    summary_mode: Literal["provider", "deterministic"] = "provider"
    background_summary: bool = False
    soft_fraction: float = 0.80
    recitation: bool = False
    reflect_above_tokens: int = 4_000
    summary_fraction: float = Field(0.04, gt=0, le=1)  # summary size: this share of usable
    handoff_nudge: bool = False
    handoff_fraction: float = 0.90
    retrieval_reinjection: bool = False  # older name of retrieval.auto_inject (either turns it on)
    retrieval_min_score: float = 0.5
    retrieval_max_results: int = 3


class EpisodeSettings(Section):
    enabled: bool = True
    card_max_chars: int = Field(1_600, ge=500, le=1_600)  # an archived episode's card


class MemorySettings(Section):
    enabled: bool = True
    embeddings: Literal["auto", "off"] = "auto"
    model_path: str | None = None
    model_name: str = "minishlab/potion-base-8M"
    cosine_floor: float = 0.35
    max_entries_per_turn: int = 3
    max_tokens_per_turn: int = 500
    promotion: Literal["off", "suggest", "auto"] = "off"
    allow_download: bool = False  # one-time hub download of model_name when no local model


class RepoMapSettings(Section):
    enabled: bool = True
    tokens: int = 1_024
    tokens_no_files: int = 2_048
    max_file_bytes: int = Field(1_000_000, gt=0)  # larger files are left out
    extra_exclude_dirs: list[str] = Field(default_factory=list)  # added to the built-in list
    stability_top_k: int = Field(10, ge=1)  # leading files whose change re-renders
    stability_drift: float = Field(0.35, ge=0.0, le=2.0)  # rank drift that re-renders
    debounce_s: float = Field(0.25, ge=0.0)  # watcher: quiet time before an update
    workers: int = Field(0, ge=0)  # parse processes for big builds; 0 = one per core (max 4)


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
