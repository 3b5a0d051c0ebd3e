"""Context presets: one name sets several thresholds at once.

Keep stays closest to sending everything; Save collects early and hides heavy,
rarely used tools. Values are fractions of the usable window.
"""

from __future__ import annotations

from typing import Any

from bonsai.settings import ContextSettings, PresetName

PRESETS: dict[PresetName, dict[str, Any]] = {
    "keep": {
        "gc_trigger": 0.85,
        "compact_trigger": 0.97,
        "compact_target": 0.60,
        "keep_recent_groups": 4,
    },
    "balanced": {
        "gc_trigger": 0.75,
        "compact_trigger": 0.95,
        "compact_target": 0.50,
        "keep_recent_groups": 3,
    },
    "save": {
        "gc_trigger": 0.55,
        "compact_trigger": 0.85,
        "compact_target": 0.40,
        "keep_recent_groups": 2,
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


def preset_overrides(name: PresetName) -> dict[str, Any]:
    """Dotted config keys a preset writes (so the user's file shows them)."""
    out: dict[str, Any] = {"context.preset": name}
    out.update({f"context.{k}": v for k, v in PRESETS[name].items()})
    out["tools.hidden"] = list(SAVE_HIDDEN_TOOLS) if name == "save" else []
    return out


def effective_context(settings: ContextSettings) -> ContextSettings:
    """The thresholds in force: the smol profile overrides the preset's."""
    if not settings.smol:
        return settings
    return settings.model_copy(update=SMOL)
