"""``assemble``: the per-call pipeline, and ``apply_compaction``.

Stages, in order, on the request being built:

1. re-assert the state: stubs (their stored bytes), pins, drops, the summary,
   archived episodes (their cards' stored bytes), after repairing archives that
   no longer match the episodes (``episodes_stage``);
2. under pressure, archive every eligible closed episode when the batch pays;
3. compaction when the request passes ``compact_trigger`` (tier 1 stubs, then
   tier 2 folds; provider mode may leave tier 2 to the daemon, see
   ``Assembly.summary_due``);
4. otherwise continuous GC when it passes ``gc_trigger`` and a batch pays for itself.

The result carries the request, the ledger, what each stage did, and the state
to persist.
"""

from __future__ import annotations

from bonsai.core.context.background import freshness, ready_summary
from bonsai.core.context.compaction import (
    CompactionPlan,
    compacted_state,
    compaction_records,
    plan_on,
)
from bonsai.core.context.episodes_stage import archive_pass, episode_rows, prepare
from bonsai.core.context.expiry import expiry_record, expiry_stubs
from bonsai.core.context.fold import goal_and_task, summary_budget_chars
from bonsai.core.context.frame import visible_tools
from bonsai.core.context.gc import collect
from bonsai.core.context.ledger import ledger
from bonsai.core.context.pipeline_types import AssembleInput, Assembly, Record
from bonsai.core.context.stubbing import work_pays
from bonsai.core.context.work import Work, analyse
from bonsai.core.history.episodes import Episode

TRUSTED = frozenset({"exact", "high"})


def _tools(inp: AssembleInput) -> list[dict[str, object]]:
    return visible_tools(inp.tools, sorted({*inp.hidden_tools, *inp.state.hidden_tools}))


def assemble(inp: AssembleInput) -> Assembly:
    """Build the request for this model call; see the module docstring."""
    inp, episodes, notes = prepare(inp)
    first = analyse(inp, inp.state, _tools(inp))
    work, expired = expiry_stubs(first)
    work, archived = archive_pass(work, episodes)
    settings, usable = inp.settings, inp.budget.usable
    if work.used > settings.compact_trigger * usable:
        work, records, due = _auto_compact(work)
    else:
        work, records = collect(work)
        due = False
    done = [*expired, *archived, *records]
    done += expiry_record(first, work, done)
    return finish(work, [*notes, *done], summary_due=due, episodes=episodes)


def _auto_compact(work: Work) -> tuple[Work, list[Record], bool]:
    settings = work.inp.settings
    target = int(settings.compact_target * work.usable)
    provider = settings.summary_mode == "provider"
    plan = plan_on(work, target, "provider" if provider else "deterministic")
    notes: list[Record] = []
    if work.used > work.usable and plan.estimated_after > work.usable:
        plan, notes = _emergency(work, plan, target)
    if plan.tier == 0:
        return work, [], False
    if work.used <= work.usable and not _pays(work, plan):
        return work, [], False  # protected content holds the request up: wait, do not churn
    text: str | None = None
    note_extra = ""
    due = False
    if plan.fold and provider:
        text, note_extra = _background_text(work, plan)
        if text is None and plan.after_tier1 <= work.usable:
            plan = _tier1_only(plan)
            due = True
    state, _, note = compacted_state(work, plan, text)
    after = analyse(work.inp, state, work.frame.tools, work)
    records = compaction_records(work, after, plan, note_extra or note)
    return after, [*notes, *records], due


def _pays(work: Work, plan: CompactionPlan) -> bool:
    changed = set(plan.stubs) | set(plan.fold)
    kept = work.tokens_before(changed, summary_changes=bool(plan.fold))
    resent = max(0, plan.estimated_after - kept - work.fresh_tokens())
    return work_pays(work, work.used - plan.estimated_after, resent)


def _emergency(
    work: Work, plan: CompactionPlan, target: int
) -> tuple[CompactionPlan, list[Record]]:
    """The request cannot fit even after a normal compaction: the protected tail
    itself is too big. Protect only the latest group and user message, and say so."""
    relaxed = work.inp.settings.model_copy(
        update={"keep_recent_groups": 1, "keep_user_messages": 1}
    )
    inp = work.inp.model_copy(update={"settings": relaxed})
    tight = plan_on(analyse(inp, work.state, work.frame.tools), target, plan.mode)
    if tight.estimated_after >= plan.estimated_after:
        return plan, []
    note = Record(
        kind="guard",
        detail="the protected tail does not fit the window: only the latest group is kept whole",
    )
    return tight, [note]


def _tier1_only(plan: CompactionPlan) -> CompactionPlan:
    return plan.model_copy(
        update={"fold": [], "fold_groups": 0, "estimated_after": plan.after_tier1}
    )


def _background_text(work: Work, plan: CompactionPlan) -> tuple[str | None, str]:
    summary = work.state.background
    verdict = freshness(summary, plan.through_seq)
    if summary is None or verdict == "none":
        return None, ""
    goal, task = goal_and_task(work, plan.fold)
    text = ready_summary(
        summary,
        work.inp.items,
        plan.fold,
        work.calls,
        goal=goal,
        task=task,
        max_chars=summary_budget_chars(work),
        trace_share=work.inp.settings.summary_trace_share,
    )
    note = "background summary" if verdict == "use" else "background summary, extended"
    return text, note


def apply_compaction(
    inp: AssembleInput, plan: CompactionPlan, summary_text: str | None
) -> Assembly:
    """Apply ``plan`` (from ``plan_compaction`` on the same input). ``summary_text``
    is the fast model's summary; ``None`` uses the deterministic one."""
    inp, episodes, notes = prepare(inp)
    work = analyse(inp, inp.state, _tools(inp))
    state, _, note = compacted_state(work, plan, summary_text)
    after = analyse(inp, state, work.frame.tools)
    records = [*notes, *compaction_records(work, after, plan, note)]
    return finish(after, records, episodes=episodes)


def finish(
    work: Work,
    records: list[Record],
    *,
    summary_due: bool = False,
    episodes: list[Episode] | None = None,
) -> Assembly:
    inp = work.inp
    rows, total = ledger(work, inp.tools)
    messages, prefix = work.wire()
    if work.frame.tail is not None:
        messages.append(work.frame.tail)
    return Assembly(
        system=work.frame.system,
        messages=messages,
        tools=work.frame.tools,
        ledger=rows,
        totals=total,
        records=records,
        state=work.state,
        prefix_hash=prefix,
        summary_due=summary_due,
        over_budget=total.used > total.usable and total.confidence in TRUSTED,
        episodes=episode_rows(work, episodes) if episodes and inp.episodes else [],
    )
