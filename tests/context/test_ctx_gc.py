"""Continuous GC: the rewrite economics, superseded reads, protection, re-assertion."""

from __future__ import annotations

import json

import pytest
from ctx_helpers import (
    GC_SETTINGS,
    big_session,
    char_counter,
    items_of,
    make_input,
    step,
    user,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from bonsai.core.context import ContextState, Item, apply_action, assemble
from bonsai.core.context.candidates import make_stub
from bonsai.core.context.groups import call_names, group_items
from bonsai.domain import Message
from bonsai.settings import ContextSettings

BIG_WINDOW, BIG_RESERVE = 1_000_000, 16_000  # usable 984,000: 75% is 738,000


def _saving(items: list[Item], index: int) -> int:
    """Tokens a GC stub of ``items[index]`` saves (built exactly as the pipeline builds it)."""
    counter = char_counter()
    item = items[index]
    full = counter.count_message(item.message).tokens
    stub = make_stub(item, full, "old tool output", "gc", 1, call_names(items))
    stubbed = item.message.model_copy(update={"content": stub.text})
    return full - counter.count_message(stubbed).tokens


def _economics_session(saving: int) -> list[Item]:
    """A huge protected task, one old output saving exactly ``saving`` tokens, a short tail."""
    size = saving
    while True:
        messages = [user("t" * 745_000), *step(0, "o" * size, path="src/a.py")]
        for n in range(1, 4):
            messages += step(n, "short", path=f"src/s{n}.py")
        items = items_of(messages)
        off = saving - _saving(items, 2)
        if off == 0:
            return items
        size += off


@pytest.mark.parametrize(("saving", "rewrites"), [(7_999, False), (8_000, True)])
def test_a_batch_must_save_8000_tokens_in_a_large_window(saving: int, rewrites: bool) -> None:
    items = _economics_session(saving)
    inp = make_input(items, window=BIG_WINDOW, reserve=BIG_RESERVE, settings=GC_SETTINGS)
    assert inp.settings.min_rewrite_fraction * 750_000 > 8_000  # only the 8,000 rule can pass
    result = assemble(inp)
    assert result.totals.used > 0.75 * inp.budget.usable
    assert ("m3" in result.state.stubs) is rewrites
    assert bool(result.records) is rewrites
    if rewrites:
        gc = next(r for r in result.records if r.kind == "gc")
        assert gc.tokens_before is not None and gc.tokens_after is not None
        assert gc.tokens_before - gc.tokens_after == 8_000
        assert gc.prefix_hash_before != gc.prefix_hash_after
    else:
        assert result.messages[:-1] == [i.message for i in items]


def test_a_rewrite_that_resends_more_than_it_saves_waits() -> None:
    # one early output saves ~1,200 tokens of an ~8,000-token request (15%: enough by
    # the 8% rule) but everything after it (~6,000 tokens) would be re-sent uncached
    messages = [user("fix it"), *step(0, "a" * 1_300, path="src/a.py")]
    messages += [m for n in range(1, 14) for m in step(n, "b" * 180, path=f"src/b{n}.py")]
    messages += step(14, "c" * 3_000, path="src/c.py")
    items = items_of(messages)
    waiting = assemble(make_input(items, window=20_000, reserve=10_000, settings=GC_SETTINGS))
    assert waiting.totals.used > 7_500 and waiting.records == []
    eager = GC_SETTINGS.model_copy(update={"min_rewrite_payback": 0})
    rewritten = assemble(make_input(items, window=20_000, reserve=10_000, settings=eager))
    assert "m3" in rewritten.state.stubs


def test_superseded_reads_go_first_with_their_reason() -> None:
    messages = [user("refactor")]
    messages += step(0, "A" * 2_000, path="src/a.py", lines=(1, 100))
    messages += step(1, "B" * 2_000, path="src/b.py")
    messages += step(2, "A" * 2_100, path="src/a.py")  # covers the first read
    messages += step(3, "e", path="src/b.py", kind="edit")  # changes b.py
    messages += [m for n in range(4, 7) for m in step(n, "z" * 1_000, path=f"src/z{n}.py")]
    items = items_of(messages)
    result = assemble(
        make_input(items, window=20_000, reserve=10_000, settings=ContextSettings(gc_trigger=0.5))
    )
    stubs = result.state.stubs
    assert stubs["m3"].reason == "superseded: `src/a.py` was read again later (m7)"
    assert stubs["m5"].reason == "superseded: `src/b.py` was changed later (m9)"
    assert stubs["m3"].text.startswith(
        "[stubbed by bonsai] output of read_file `src/a.py` lines 1-100"
    )
    assert stubs["m3"].text.endswith('read_tool_output("call0") returns it.')
    assert [r.node_id for r in result.records if r.kind == "stub"][:2] == ["m3", "m5"]


def test_stubs_are_reasserted_byte_identically_across_turns_and_restarts() -> None:
    messages = big_session(10, 1_500)
    # no rewrites below the trigger here: those are tested in test_ctx_economic.py
    settings = ContextSettings(gc_trigger=0.6, payback_horizon=0.0)
    first = assemble(
        make_input(items_of(messages), window=24_000, reserve=10_000, settings=settings)
    )
    assert first.state.stubs
    state = first.state
    for turn in range(2, 5):
        messages += step(100 + turn, "small output", path=f"src/n{turn}.py")
        state = ContextState.model_validate_json(state.model_dump_json())  # a daemon restart
        later = assemble(
            make_input(
                items_of(messages),
                state=state,
                window=24_000,
                reserve=10_000,
                settings=settings,
                turn=turn,
            )
        )
        assert later.records == []
        sent_before = first.messages[:-1]  # without the volatile tail
        assert later.messages[: len(sent_before)] == sent_before
        state = later.state


def _protected(items: list[Item], keep_groups: int, keep_users: int) -> set[str]:
    groups = group_items(items)
    ids = {i for g in groups[-keep_groups:] for i in g.ids}
    users = [i.id for i in items if i.message.role == "user"]
    return ids | set(users[-keep_users:]) if keep_users else ids


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=10, max_value=3_000), min_size=3, max_size=25),
    users_at=st.sets(st.integers(min_value=0, max_value=24), max_size=4),
    gc=st.floats(min_value=0.1, max_value=0.9),
    compact=st.floats(min_value=0.2, max_value=0.99),
    target=st.floats(min_value=0.05, max_value=0.6),
    keep=st.integers(min_value=1, max_value=4),
)
def test_protected_groups_are_never_touched(
    sizes: list[int], users_at: set[int], gc: float, compact: float, target: float, keep: int
) -> None:
    messages: list[Message] = [user("task")]
    for n, size in enumerate(sizes):
        if n in users_at:
            messages.append(user(f"also do {n}"))
        messages += step(n, "x" * size, path=f"src/f{n % 5}.py")
    items = items_of(messages)
    knobs = ContextSettings(
        gc_trigger=gc,
        compact_trigger=max(gc, compact),
        compact_target=target,
        keep_recent_groups=keep,
        summary_mode="deterministic",
        min_rewrite_payback=0,
    )
    protected = _protected(items, keep, 2) | {items[3].id}  # items[3] gets pinned
    counter = char_counter()
    protected_size = sum(
        counter.count_message(i.message).tokens for i in items if i.id in protected
    )
    window = 12_000 + 3 * protected_size  # the frame and protected part fit: no emergency
    state = apply_action(ContextState(), items, items[3].id, "pin", 1)[0]
    result = assemble(make_input(items, state=state, window=window, reserve=10_000, settings=knobs))
    sent = {id(m) for m in result.messages}
    for item in items:
        if item.id in protected or item.id == items[3].id:
            assert id(item.message) in sent, f"{item.id} was collected"
    _assert_pairs_kept(result.messages)


def _assert_pairs_kept(messages: list[Message]) -> None:
    calls = {c.id for m in messages for c in m.tool_calls}
    results = {m.tool_call_id for m in messages if m.role == "tool"}
    assert calls == results


def test_gc_records_carry_the_cache_impact() -> None:
    result = assemble(
        make_input(
            items_of(big_session(12, 1_200)),
            window=30_000,
            reserve=10_000,
            settings=GC_SETTINGS.model_copy(update={"gc_trigger": 0.5}),
        )
    )
    gc = next(r for r in result.records if r.kind == "gc")
    assert "leading tokens stay cached" in gc.detail
    assert json.loads(gc.model_dump_json())["kind"] == "gc"


def _fresh_session(*, latest_is_big: bool) -> list[Item]:
    """One old output worth stubbing, small protected steps, and a 3,000-token
    output that is either the newest result (not sent before) or one step older."""
    messages = [user("fix it"), *step(0, "a" * 2_000, path="src/a.py")]
    messages += step(1, "b" * 50, path="src/b.py")
    if latest_is_big:
        messages += step(2, "s" * 50, path="src/s.py")
        messages += step(3, "c" * 3_000, path="src/c.py")
    else:
        messages += step(2, "c" * 3_000, path="src/c.py")
        messages += step(3, "s" * 50, path="src/s.py")
    return items_of(messages)


@pytest.mark.parametrize(("latest_is_big", "rewrites"), [(True, True), (False, False)])
def test_new_content_is_not_counted_as_resent_by_a_rewrite(
    latest_is_big: bool, rewrites: bool
) -> None:
    # Stubbing m3 saves ~1,900 tokens and re-sends everything after it. When the big
    # output is the newest result, the provider reads it uncached anyway: only the
    # ~300 other tokens are the rewrite's cost (paid back 2x). One step later the big
    # output was already cached, and re-sending it would cost more than the stub saves.
    items = _fresh_session(latest_is_big=latest_is_big)
    inp = make_input(items, window=16_000, reserve=9_000, settings=GC_SETTINGS)  # GC > 5,250
    assert inp.settings.min_rewrite_payback == 2.0
    result = assemble(inp)
    before = result.records[-1].tokens_before if rewrites else result.totals.used
    assert before is not None and before > inp.settings.gc_trigger * inp.budget.usable
    assert ("m3" in result.state.stubs) is rewrites
    assert [r.kind for r in result.records if r.kind == "gc"] == (["gc"] if rewrites else [])
