"""Context presets and the smol profile: one name sets several knobs at once.

Keep stays closest to sending everything; Balanced is the default; Save
collects early and hides heavy, rarely used tools. The smol profile, for small
models, overrides the preset: lower thresholds and reserve, a reduced tool set
and system prompt, no repo map or indexes, a 2 KiB steering cap, deterministic
summaries only, memory recall off. Fractions are of the usable window.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from bonsai.settings import ContextSettings, PresetName

PRESETS: dict[PresetName, dict[str, Any]] = {
    "keep": {
        "gc_trigger": 0.85,
        "compact_trigger": 0.97,
        "compact_target": 0.60,
        "keep_recent_groups": 4,
        "min_rewrite_payback": 2.0,
        "summary_fraction": 0.04,
        "payback_horizon": 0.0,
    },
    "balanced": {
        "gc_trigger": 0.40,
        "compact_trigger": 0.60,
        "compact_target": 0.15,
        "keep_recent_groups": 3,
        "min_rewrite_payback": 2.0,
        "summary_fraction": 0.018,
        "payback_horizon": 0.5,
    },
    "save": {
        "gc_trigger": 0.30,
        "compact_trigger": 0.45,
        "compact_target": 0.15,
        "keep_recent_groups": 2,
        "min_rewrite_payback": 5.0,
        "summary_fraction": 0.0125,
        "summary_trace_share": 0.0,
        "payback_horizon": 0.5,
    },
}

SAVE_HIDDEN_TOOLS = ["glob", "todo_write"]

SMOL: dict[str, Any] = {
    "gc_trigger": 0.35,
    "compact_trigger": 0.50,
    "compact_target": 0.35,
    "output_reserve": 4_000,
    "steering_cap_bytes": 2 * 1024,
    "summary_mode": "deterministic",
    "keep_recent_groups": 2,
}

SMOL_TOOLS = ("bash", "terminal", "todo_write", "todowrite", "set_session_title")


class SmolProfile(BaseModel):
    """What the smol profile changes, for docs, settings UIs and the daemon."""

    model_config = ConfigDict(frozen=True)

    context: dict[str, Any] = dict(SMOL)
    tools: tuple[str, ...] = SMOL_TOOLS
    repo_map: bool = False
    skills_index: bool = False
    subagents_index: bool = False
    memory_recall: bool = False
    reduced_system_prompt: bool = True


SMOL_PROFILE = SmolProfile()


def preset_overrides(name: PresetName) -> dict[str, Any]:
    """Dotted config keys a preset writes (so the user's file shows them)."""
    out: dict[str, Any] = {"context.preset": name}
    out.update({f"context.{k}": v for k, v in PRESETS[name].items()})
    out["tools.hidden"] = list(SAVE_HIDDEN_TOOLS) if name == "save" else []
    return out


def with_preset(settings: ContextSettings, name: PresetName) -> ContextSettings:
    """``settings`` with the preset's context values written over them."""
    return settings.model_copy(update={"preset": name, **PRESETS[name]})


def effective_context(settings: ContextSettings) -> ContextSettings:
    """The thresholds in force: the smol profile overrides the preset's."""
    if not settings.smol:
        return settings
    return settings.model_copy(update=SMOL)


def smol_tools(all_tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The reduced tool set of the smol profile (in the original order); raises
    ``ValueError`` when none of the smol tools is offered."""
    kept = [t for t in all_tools if t.get("name") in SMOL_TOOLS]
    if not kept:
        names = ", ".join(sorted(str(t.get("name")) for t in all_tools)) or "(none)"
        raise ValueError(
            f"smol mode needs one of the tools {', '.join(SMOL_TOOLS)}; offered: {names}"
        )
    return kept
