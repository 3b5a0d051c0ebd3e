"""Assembly: placement, byte stability, ledger accounting, hidden tools, images."""

from __future__ import annotations

import json

import pytest
from ctx_helpers import (
    PERSONA,
    TOOLS,
    VOLATILE,
    big_session,
    char_counter,
    items_of,
    make_input,
    on_wire_sum,
    step,
    user,
    wire_tokens,
)

from bonsai.core.context import (
    AssemblyMemo,
    ContextState,
    SystemPart,
    apply_action,
    assemble,
    node_text,
)
from bonsai.domain import Message
from bonsai.settings import ContextSettings


def test_unmanaged_request_is_the_log_with_the_volatile_tail_last() -> None:
    messages = big_session(3, 100)
    result = assemble(make_input(items_of(messages)))
    assert result.messages[:-1] == messages
    assert result.messages[-1] == Message(role="user", content=VOLATILE.text)
    assert [p.id for p in result.system] == ["sys:persona"]
    assert result.records == []


def test_anthropic_keeps_the_volatile_tail_as_the_last_system_block() -> None:
    messages = big_session(2, 100)
    result = assemble(make_input(items_of(messages), family="anthropic"))
    assert result.messages == messages
    assert [p.id for p in result.system] == ["sys:persona", "sys:volatile"]


@pytest.mark.parametrize(
    ("parts", "message"),
    [
        ([VOLATILE, PERSONA], "must be last"),
        ([PERSONA, VOLATILE.model_copy(update={"text": "state"})], "must start with"),
        ([PERSONA, PERSONA], "duplicate"),
        ([PERSONA.model_copy(update={"cacheable": False})], "may be non-cacheable"),
    ],
)
def test_misplaced_system_parts_are_rejected(parts: list[SystemPart], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        assemble(make_input(items_of(big_session(1, 10)), parts=parts))


def test_assembling_twice_gives_identical_bytes() -> None:
    inp = make_input(items_of(big_session(6, 500)))
    first, second = assemble(inp), assemble(inp)
    assert first.messages == second.messages
    assert first.system == second.system
    assert first.prefix_hash == second.prefix_hash
    assert first.ledger == second.ledger


def test_a_memo_never_changes_the_result() -> None:
    items = items_of(big_session(8, 900))
    settings = ContextSettings(gc_trigger=0.3)
    memo = AssemblyMemo()
    plain = assemble(make_input(items, window=12_000, reserve=2_000, settings=settings))
    for _ in range(3):  # cold, then warm
        cached = assemble(
            make_input(items, window=12_000, reserve=2_000, settings=settings).model_copy(
                update={"memo": memo}
            )
        )
        assert cached.model_dump(exclude={"state"}) == plain.model_dump(exclude={"state"})
        assert cached.state == plain.state


def test_ledger_totals_equal_the_count_of_the_wire() -> None:
    messages = [*big_session(6, 700), Message(role="user", content="look", images=2)]
    messages += step(99, "y" * 500)  # longer than its stub: a user's stub of it is taken
    messages = [  # chatty steps: only a fold can reclaim their text
        m.model_copy(update={"content": m.content + " because" * 60})
        if m.role == "assistant"
        else m
        for m in messages
    ]
    items = items_of(messages)
    counter = char_counter()
    state = ContextState()
    state, _ = apply_action(state, items, "m2", "drop", 1)  # a whole step dropped
    state, _ = apply_action(state, items, "m16", "stub", 1)  # in the latest group
    state, _ = apply_action(state, items, "m7", "pin", 1)
    settings = ContextSettings(
        compact_trigger=0.9, compact_target=0.3, summary_mode="deterministic"
    )
    for family in ("openai", "anthropic"):
        inp = make_input(
            items,
            state=state,
            window=5_000,
            reserve=1_000,
            settings=settings,
            counter=counter,
            family=family,
            hidden=["glob"],
        )
        result = assemble(inp)  # over the window: a forced compaction with a summary
        assert {r.state for r in result.ledger} >= {
            "full",
            "pinned",
            "stubbed",
            "dropped",
            "summarized",
        }
        assert on_wire_sum(result) == wire_tokens(counter, result) == result.totals.used
        assert result.totals.percent == round(100 * result.totals.used / 4_000, 1)


def test_images_show_in_the_ledger_and_are_counted() -> None:
    items = items_of([user("a photo"), Message(role="user", content="see", images=3)])
    result = assemble(make_input(items))
    row = next(r for r in result.ledger if r.id == "m2")
    assert row.images == 3
    assert row.tokens > char_counter().count_message(Message(role="user", content="see")).tokens


def test_hidden_tools_leave_the_request_and_show_as_dropped() -> None:
    result = assemble(make_input(items_of(big_session(1, 10)), hidden=["glob"]))
    assert [t["name"] for t in result.tools] == ["read_file", "bash"]
    row = next(r for r in result.ledger if r.id == "tool:glob")
    assert (row.state, row.reason) == ("dropped", "hidden tool")


def test_an_unknown_hidden_tool_is_rejected_with_the_valid_names() -> None:
    with pytest.raises(
        ValueError, match=r"unknown tool name.*grep.*valid names: bash, glob, read_file"
    ):
        assemble(make_input(items_of(big_session(1, 10)), hidden=["grep"]))


def test_state_json_round_trip_keeps_the_request_byte_identical() -> None:
    items = items_of(big_session(10, 2_000))
    settings = ContextSettings(gc_trigger=0.5, compact_trigger=0.9)
    first = assemble(make_input(items, window=30_000, reserve=10_000, settings=settings))
    assert first.state.stubs, "the setup must create stubs"
    restored = ContextState.model_validate(
        json.loads(json.dumps(first.state.model_dump(mode="json")))
    )
    again = assemble(
        make_input(items, state=restored, window=30_000, reserve=10_000, settings=settings)
    )
    assert again.messages == first.messages
    assert again.prefix_hash == first.prefix_hash
    assert again.records == []  # nothing new to do: the stubs are re-asserted as they were


def test_node_text_returns_originals() -> None:
    items = items_of(big_session(3, 200))
    state, _ = apply_action(ContextState(), items, "m3", "stub", 1)
    inp = make_input(items, state=state)
    assert node_text(inp, "m3") == items[2].message.content
    assert node_text(inp, "sys:persona") == PERSONA.text
    assert json.loads(node_text(inp, "tool:bash")) == TOOLS[1]
    assert "read_file" in node_text(inp, "m2")
    with pytest.raises(KeyError, match="no node 'm99'"):
        node_text(inp, "m99")
