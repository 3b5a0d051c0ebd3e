"""Presets, the smol profile, hidden-tool validation and the recitation anchor."""

from __future__ import annotations

import pytest
from ctx_helpers import TOOLS, items_of, make_input, step, user

from bonsai.core.context import ContextState, SummaryState, assemble, validate_hidden_tools
from bonsai.core.context.presets import (
    PRESETS,
    SMOL_PROFILE,
    effective_context,
    preset_overrides,
    smol_tools,
    with_preset,
)
from bonsai.settings import ContextSettings


def test_presets_order_from_keeping_to_saving() -> None:
    keep, balanced, save = (with_preset(ContextSettings(), n) for n in ("keep", "balanced", "save"))
    assert keep.gc_trigger > balanced.gc_trigger > save.gc_trigger
    assert keep.compact_trigger > balanced.compact_trigger > save.compact_trigger
    assert keep.keep_recent_groups > balanced.keep_recent_groups > save.keep_recent_groups
    assert (balanced.gc_trigger, balanced.compact_trigger, balanced.compact_target) == (
        0.40,
        0.60,
        0.15,
    )
    # below the trigger only balanced and save take a batch that pays back in time
    assert keep.payback_horizon == 0 < balanced.payback_horizon
    assert save.summary_fraction < balanced.summary_fraction  # save keeps a shorter summary
    assert save.min_rewrite_payback > balanced.min_rewrite_payback  # and rewrites more rarely
    assert with_preset(ContextSettings(), "balanced") == ContextSettings()  # the defaults
    assert preset_overrides("save")["tools.hidden"] == ["glob", "todo_write"]
    assert preset_overrides("keep")["context.gc_trigger"] == PRESETS["keep"]["gc_trigger"]


def test_smol_overrides_the_preset() -> None:
    smol = effective_context(with_preset(ContextSettings(smol=True), "keep"))
    assert (smol.gc_trigger, smol.compact_trigger, smol.compact_target) == (0.35, 0.50, 0.35)
    assert smol.steering_cap_bytes == 2_048 and smol.summary_mode == "deterministic"
    assert smol.output_reserve < ContextSettings().output_reserve
    assert effective_context(ContextSettings()) == ContextSettings()
    assert not SMOL_PROFILE.repo_map and not SMOL_PROFILE.memory_recall


def test_smol_keeps_only_the_small_tool_set() -> None:
    assert [t["name"] for t in smol_tools(TOOLS)] == ["bash"]
    with pytest.raises(ValueError, match="smol mode needs one of the tools"):
        smol_tools([TOOLS[0]])


def test_hidden_tool_validation() -> None:
    assert validate_hidden_tools(["glob", "glob"], TOOLS) == ["glob"]
    with pytest.raises(ValueError, match="valid names: bash, glob, read_file"):
        validate_hidden_tools(["nope"], TOOLS)


def test_recitation_pins_the_open_tasks_at_the_end() -> None:
    items = items_of([user("go"), *step(0, "out")])
    summary = SummaryState(
        text="## Open tasks\n- write tests\n- run `pytest -q`",
        through_seq=0,
        folded=[],
        mode="provider",
        revision=1,
        turn=1,
    )
    state = ContextState(summary=summary)
    on = assemble(make_input(items, state=state, settings=ContextSettings(recitation=True)))
    assert on.messages[-1].content.endswith(
        "<plan>\nOpen tasks (from the summary; the last one is "
        "the next step):\n- write tests\n- run `pytest -q`\n</plan>"
    )
    assert on.messages[-1].content.startswith("## Volatile state")
    assert any(r.id == "ctx:plan" for r in on.ledger)
    off = assemble(make_input(items, state=state))
    assert "<plan>" not in off.messages[-1].content
