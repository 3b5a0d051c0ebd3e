"""User actions: pin, unpin, drop, stub, restore — each through the pipeline and JSON."""

from __future__ import annotations

import pytest
from ctx_helpers import assert_paired, big_session, items_of, make_input, step, user

from bonsai.core.context import (
    ContextState,
    apply_action,
    apply_compaction,
    assemble,
    plan_compaction,
)
from bonsai.settings import ContextSettings

ITEMS = items_of(big_session(8, 1_500))  # m1 task, then m2/m3 … m16/m17


def _roundtrip(state: ContextState) -> ContextState:
    return ContextState.model_validate_json(state.model_dump_json())


def _sent(state: ContextState, items=ITEMS, **kw):  # type: ignore[no-untyped-def]
    return assemble(make_input(items, state=_roundtrip(state), **kw))


def test_stub_then_restore_round_trips() -> None:
    state, record = apply_action(ContextState(), ITEMS, "m3", "stub", 2)
    assert (record.kind, record.node_id) == ("stub", "m3")
    stubbed = _sent(state)
    assert stubbed.messages[2].content.startswith(
        "[stubbed by bonsai] output of read_file `src/f0.py`"
    )
    assert 'read_tool_output("call0") returns it' in stubbed.messages[2].content
    row = next(r for r in stubbed.ledger if r.id == "m3")
    assert (row.state, row.section) == ("stubbed", "stubs")
    state, record = apply_action(_roundtrip(state), ITEMS, "m3", "restore", 3)
    assert _sent(state).messages[2] == ITEMS[2].message
    assert "m3" in state.restored


def test_dropping_a_step_drops_its_results_and_restore_brings_both_back() -> None:
    state, record = apply_action(ContextState(), ITEMS, "m4", "drop", 1)
    assert "with its 1 tool results" in record.detail
    sent = _sent(state)
    assert ITEMS[3].message not in sent.messages and ITEMS[4].message not in sent.messages
    assert_paired(sent.messages)
    rows = {r.id: r for r in sent.ledger}
    assert rows["m4"].state == rows["m5"].state == "dropped"
    state, _ = apply_action(_roundtrip(state), ITEMS, "m4", "restore", 2)
    assert _sent(state).messages[:-1] == [i.message for i in ITEMS]


def test_pin_protects_from_collection_and_unpin_releases() -> None:
    settings = ContextSettings(gc_trigger=0.3, min_rewrite_payback=0)
    state, _ = apply_action(ContextState(), ITEMS, "m3", "pin", 1)
    pinned = _sent(state, window=20_000, reserve=5_000, settings=settings)
    assert "m3" not in pinned.state.stubs and "m5" in pinned.state.stubs
    assert next(r for r in pinned.ledger if r.id == "m3").state == "pinned"
    state, record = apply_action(_roundtrip(pinned.state), ITEMS, "m3", "unpin", 2)
    assert record.kind == "unpin" and "m3" not in state.pins
    later = _sent(
        state.model_copy(update={"stubs": {}}), window=20_000, reserve=5_000, settings=settings
    )
    assert "m3" in later.state.stubs


def test_pinning_a_stubbed_node_brings_its_text_back() -> None:
    state, _ = apply_action(ContextState(), ITEMS, "m3", "stub", 1)
    state, _ = apply_action(state, ITEMS, "m3", "pin", 2)
    assert _sent(state).messages[2] == ITEMS[2].message


def test_restored_nodes_are_never_collected_again() -> None:
    settings = ContextSettings(gc_trigger=0.3, min_rewrite_payback=0)
    first = _sent(ContextState(), window=20_000, reserve=5_000, settings=settings)
    assert "m3" in first.state.stubs
    state, _ = apply_action(first.state, ITEMS, "m3", "restore", 2)
    state = state.model_copy(update={"stubs": {}})  # even with every stub gone again
    again = _sent(state, window=20_000, reserve=5_000, settings=settings)
    assert "m3" not in again.state.stubs and "m5" in again.state.stubs


def test_restoring_a_folded_node_unfolds_its_group_and_the_summary_restores_all() -> None:
    inp = make_input(ITEMS, settings=ContextSettings(summary_mode="deterministic"))
    folded = apply_compaction(inp, plan_compaction(inp, target=3_000, mode="deterministic"), None)
    summary = folded.state.summary
    assert summary is not None and {"m2", "m3", "m4", "m5"} <= set(summary.folded)
    state, _ = apply_action(_roundtrip(folded.state), ITEMS, "m3", "restore", 2)
    sent = _sent(state)
    assert ITEMS[1].message in sent.messages and ITEMS[2].message in sent.messages
    assert_paired(sent.messages)
    state, record = apply_action(state, ITEMS, summary.node_id, "restore", 3)
    assert state.summary is None and record.kind == "restore"
    assert set(summary.folded) <= set(state.restored)


@pytest.mark.parametrize(
    ("node", "action", "error", "message"),
    [
        ("m99", "pin", KeyError, "no node 'm99'"),
        ("sys:persona", "drop", ValueError, "always sent"),
        ("tool:bash", "stub", ValueError, "always sent"),
        ("m3", "drop", ValueError, "drop the whole step \\(the call and all its results\\)"),
        ("m3", "unpin", ValueError, "not pinned"),
        ("m3", "restore", ValueError, "already sent in full"),
        ("m1", "shred", ValueError, "unknown action"),
    ],
)
def test_refused_actions_say_why(node: str, action: str, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        apply_action(ContextState(), ITEMS, node, action, 1)  # type: ignore[arg-type]


def test_repeated_actions_are_refused() -> None:
    state, _ = apply_action(ContextState(), ITEMS, "m3", "stub", 1)
    with pytest.raises(ValueError, match="already stubbed"):
        apply_action(state, ITEMS, "m3", "stub", 1)
    state, _ = apply_action(ContextState(), ITEMS, "m1", "drop", 1)
    with pytest.raises(ValueError, match="already dropped"):
        apply_action(state, ITEMS, "m1", "drop", 1)
    with pytest.raises(ValueError, match="restore it first"):
        apply_action(state, ITEMS, "m1", "stub", 1)


def test_a_stubbed_message_without_a_call_points_to_the_ledger() -> None:
    items = items_of([user("the task, told at length. " * 20), *step(0, "out")])  # > its stub
    state, _ = apply_action(ContextState(), items, "m1", "stub", 1)
    assert _sent(state, items).messages[0].content.endswith("the user can restore m1 from /ctx.")


def test_a_user_message_can_be_dropped_alone() -> None:
    items = items_of([user("first"), user("second"), *step(0, "out")])
    state, _ = apply_action(ContextState(), items, "m1", "drop", 1)
    assert _sent(state, items).messages[0] == items[1].message
