"""Graduated compaction: tier 1, tier 2, preview, provider/fallback summaries, emergency."""

from __future__ import annotations

import pytest
from ctx_helpers import (
    assert_paired,
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
    HEADINGS,
    ContextState,
    SummaryState,
    apply_compaction,
    assemble,
    plan_compaction,
)
from bonsai.settings import ContextSettings

DETERMINISTIC = ContextSettings(summary_mode="deterministic")


def _session() -> list:
    # ten steps: bulky outputs plus chatty assistant text that only a fold can remove
    messages = [user("Port the parser to the new API. Do not change the public names.")]
    for n in range(10):
        messages += step(n, f"out{n} " + "x" * 1_200, path=f"src/p{n}.py")
        messages[-2] = messages[-2].model_copy(
            update={"content": f"Decided to handle part {n}. " + "y" * 600}
        )
    return messages


def test_tier_one_is_enough_when_stubs_reach_the_target() -> None:
    items = items_of(big_session(10, 1_500))
    plan = plan_compaction(
        make_input(items, settings=DETERMINISTIC), target=7_000, mode="deterministic"
    )
    assert plan.tier == 1 and plan.fold == [] and plan.summary_text is None
    assert plan.after_tier1 <= 7_000 < plan.before


def test_preview_changes_nothing_and_apply_matches_it() -> None:
    items = items_of(_session())
    inp = make_input(items, settings=DETERMINISTIC)
    plan = plan_compaction(inp, target=8_000, mode="deterministic")
    assert plan.tier == 2 and inp.state == ContextState()  # a preview: the state is untouched
    result = apply_compaction(inp, plan, None)
    assert result.totals.used == plan.estimated_after <= 8_000
    assert on_wire_sum(result) == wire_tokens(inp.counter, result)


def test_tier_two_folds_whole_groups_into_a_structured_summary() -> None:
    items = items_of(_session())
    inp = make_input(items, settings=DETERMINISTIC)
    result = apply_compaction(inp, plan_compaction(inp, target=8_000, mode="deterministic"), None)
    assert_paired(result.messages)
    summary = result.messages[1]
    assert result.messages[0] == items[0].message  # the task stays first, verbatim
    assert "lossy reference data" in summary.content
    heads = [line[3:] for line in summary.content.splitlines() if line.startswith("## ")]
    assert heads == list(HEADINGS)
    assert "`src/p0.py` (read)" in summary.content
    assert result.state.summary is not None and result.state.summary.revision == 1
    folded = set(result.state.summary.folded)
    assert "m2" in folded and "m3" in folded  # a call and its result leave together
    kinds = [r.kind for r in result.records]
    assert kinds[-2:] == ["fold", "compaction"]
    compaction = result.records[-1]
    assert compaction.tokens_before and compaction.tokens_after
    assert compaction.tokens_after < compaction.tokens_before
    assert compaction.prefix_hash_before != compaction.prefix_hash_after


def test_a_previous_summary_is_updated_not_summarised_again() -> None:
    items = items_of(_session())
    marker = "- `legacy_parse()` must stay importable"
    previous = SummaryState(
        text=f"## Decisions\n{marker}\n\n## Open tasks\n- port `tokenize()`",
        through_seq=3,
        folded=["m2", "m3"],
        mode="provider",
        revision=1,
        turn=1,
    )
    inp = make_input(items, state=ContextState(summary=previous), settings=DETERMINISTIC)
    plan = plan_compaction(inp, target=4_000, mode="provider")
    assert plan.prompt is not None and plan.source is not None
    assert marker in plan.prompt  # the model updates the previous summary ...
    assert "out0 " not in plan.source and "out2 " in plan.source  # ... with the new span only
    result = apply_compaction(inp, plan, None)
    summary = result.state.summary
    assert summary is not None and summary.revision == 2
    assert marker[2:] in summary.text and "port `tokenize()`" in summary.text
    assert {"m2", "m3"} <= set(summary.folded)
    assert "deterministic fallback" in result.records[-2].detail


def test_a_model_summary_is_used_verbatim() -> None:
    items = items_of(_session())
    inp = make_input(items)
    plan = plan_compaction(inp, target=8_000, mode="provider")
    text = "## Current goal\n- port the parser"
    result = apply_compaction(inp, plan, text)
    assert result.state.summary is not None and result.state.summary.text == text
    assert result.state.summary.mode == "provider"
    assert "summary: fast model" in result.records[-2].detail


def test_provider_mode_leaves_tier_two_to_the_daemon_while_the_request_fits() -> None:
    items = items_of(_session())
    settings = ContextSettings(compact_trigger=0.5, compact_target=0.2, min_rewrite_payback=0)
    result = assemble(make_input(items, window=30_000, reserve=10_000, settings=settings))
    assert result.summary_due and result.state.summary is None
    assert result.state.stubs  # tier 1 was applied
    again = assemble(
        make_input(
            items,
            window=30_000,
            reserve=10_000,
            settings=settings.model_copy(update={"summary_mode": "deterministic"}),
        )
    )
    assert not again.summary_due and again.state.summary is not None


def test_a_protected_tail_that_does_not_fit_is_relaxed_visibly() -> None:
    messages = [user("go")]
    for n in range(4):
        messages += step(n, "q" * 4_000, path=f"src/h{n}.py")
    items = items_of(messages)
    result = assemble(make_input(items, window=20_000, reserve=10_000, settings=DETERMINISTIC))
    assert result.totals.used <= 10_000
    assert any(r.kind == "guard" and "does not fit" in r.detail for r in result.records)
    assert result.messages[-2] == items[-1].message  # the latest result is always whole


def test_compaction_targets_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive token count"):
        plan_compaction(make_input(items_of(_session())), target=0, mode="deterministic")


def test_a_plan_for_another_session_is_refused() -> None:
    inp = make_input(items_of(_session()), settings=DETERMINISTIC)
    plan = plan_compaction(inp, target=8_000, mode="deterministic")
    other = make_input(items_of(big_session(2, 10)))
    with pytest.raises(ValueError, match="plan again"):
        apply_compaction(other, plan, None)


def test_fold_is_skipped_when_the_summary_would_cost_more() -> None:
    items = items_of([user("hi"), *step(0, "tiny", path="src/t.py"), *step(1, "small")])
    plan = plan_compaction(
        make_input(items, counter=char_counter()), target=1, mode="deterministic"
    )
    assert plan.fold == []


def _goal_lines(text: str) -> list[str]:
    section = text.split("## Current goal\n", 1)[1].split("\n\n", 1)[0]
    return section.splitlines()


def test_the_goal_is_referenced_while_its_message_is_still_sent_in_full() -> None:
    items = items_of(_session())
    inp = make_input(items, settings=DETERMINISTIC)
    result = apply_compaction(inp, plan_compaction(inp, target=8_000, mode="deterministic"), None)
    assert result.messages[0] == items[0].message  # the task stays, verbatim
    summary = result.state.summary
    assert summary is not None
    assert _goal_lines(summary.text) == ["- (the latest user message, sent in full)"]
    assert "Port the parser" not in summary.text  # not sent twice


def test_a_folded_task_is_quoted_in_the_summary() -> None:
    messages = [user("Port the parser to the new API."), *step(0, "p" * 1_500, path="src/p.py")]
    messages += [user("Now the lexer."), *step(1, "l" * 1_500, path="src/l.py")]
    messages += [user("And the tests."), *step(2, "t" * 1_500, path="src/t.py")]
    messages += step(3, "u" * 1_500, path="src/u.py")
    knobs = ContextSettings(  # no tier 1: the fold takes the oldest groups
        summary_mode="deterministic", keep_user_messages=1, min_stub_tokens=10**9
    )
    inp = make_input(items_of(messages), settings=knobs)
    result = apply_compaction(inp, plan_compaction(inp, target=3_000, mode="deterministic"), None)
    summary = result.state.summary
    assert summary is not None and "m1" in summary.folded
    assert _goal_lines(summary.text) == [
        "- task: Port the parser to the new API.",
        "- (the latest user message, sent in full)",
    ]


def test_the_summary_is_kept_within_its_share_of_the_window() -> None:
    messages = [user("Port the parser to the new API.")]
    for n in range(30):
        messages += step(
            n, f"out{n} " + "x" * 800, path=f"src/package/module_{n}/implementation.py"
        )
    items = items_of(messages)
    texts = []
    for fraction in (0.0125, 0.04):
        knobs = ContextSettings(summary_mode="deterministic", summary_fraction=fraction)
        inp = make_input(items, window=50_000, reserve=10_000, settings=knobs)  # usable 40,000
        plan = plan_compaction(inp, target=3_000, mode="deterministic")
        summary = apply_compaction(inp, plan, None).state.summary
        assert summary is not None
        texts.append(summary.text)
    small, large = texts
    assert len(small) <= 500 * 3 < len(large)  # 1.25% of 40,000 tokens, three characters each
    assert len(large) <= 1_600 * 3
