"""Graduated compaction: tier 1 stubs, tier 2 folds into the rolling summary.

``plan_compaction`` says what would happen (a preview changes nothing);
``apply_compaction`` applies a plan with a model-written summary or, given
``None``, the deterministic one. The daemon calls the fast model between the
two, so this module stays pure.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from bonsai.core.context.candidates import stub_candidates
from bonsai.core.context.context_state import ContextState, StubEntry, SummaryMode
from bonsai.core.context.fold import Fold, choose_fold, fold_state
from bonsai.core.context.frame import visible_tools
from bonsai.core.context.groups import group_of
from bonsai.core.context.pipeline_types import AssembleInput, Record
from bonsai.core.context.prompt import render_span, summary_prompt
from bonsai.core.context.stubbing import add_stubs, cache_note, choose_stubs, stub_records
from bonsai.core.context.work import Work, analyse

CompactionMode = Literal["provider", "deterministic", "fallback"]


class CompactionPlan(BaseModel):
    """What one compaction would do. ``fold`` empty means tier 1 was enough."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: CompactionMode
    target: int
    before: int
    after_tier1: int
    estimated_after: int
    stubs: dict[str, StubEntry]
    fold: list[str]
    fold_groups: int
    through_seq: int
    summary_text: str | None  # the deterministic summary (always set when folding)
    prompt: str | None  # provider mode: what the fast model is asked
    source: str | None  # provider mode: the folded span as a transcript
    records: list[Record]  # what applying the plan records (hashes filled in on apply)

    @property
    def tier(self) -> int:
        return 2 if self.fold else 1 if self.stubs else 0


def _target(inp: AssembleInput, target: int | None) -> int:
    if target is None:
        return int(inp.settings.compact_target * inp.budget.usable)
    if target <= 0:
        raise ValueError(f"compaction target must be a positive token count, got {target}")
    return target


def plan_on(work: Work, target: int, mode: CompactionMode) -> CompactionPlan:
    settings = work.inp.settings
    candidates = stub_candidates(
        work.nodes,
        work.protected,
        work.superseded,
        min_tokens=settings.min_stub_tokens,
        include_failed=True,
    )
    stubs, _ = choose_stubs(work, candidates, target, "compaction")
    tier1 = work
    if stubs:
        tier1 = analyse(work.inp, add_stubs(work.state, stubs), work.frame.tools, work)
    fold = choose_fold(tier1, target) if tier1.used > target else None
    if fold is not None and fold.projected >= tier1.used:
        fold = None  # the summary would cost more than what it folds
    return _plan(work, tier1, fold, stubs, target, mode)


def _plan(
    work: Work,
    tier1: Work,
    fold: Fold | None,
    stubs: dict[str, StubEntry],
    target: int,
    mode: CompactionMode,
) -> CompactionPlan:
    fold_ids = fold.ids if fold else []
    source = render_span(fold.span, work.calls) if fold and mode == "provider" else None
    previous = work.state.summary.text if work.state.summary else None
    gone = set(fold_ids) | work.state.folded()
    seqs = [i.seq for i in work.inp.items if i.id in gone]
    records = stub_records({k: v for k, v in stubs.items() if k not in set(fold_ids)})
    if fold:
        records.append(
            Record(kind="fold", detail=f"{fold.groups} groups, {len(fold.ids)} messages")
        )
    return CompactionPlan(
        mode=mode,
        target=target,
        before=work.used,
        after_tier1=tier1.used,
        estimated_after=fold.projected if fold else tier1.used,
        stubs=stubs,
        fold=fold_ids,
        fold_groups=fold.groups if fold else 0,
        through_seq=max(seqs, default=0),
        summary_text=fold.summary if fold else None,
        prompt=summary_prompt(previous, source) if fold and mode == "provider" and source else None,
        source=source if mode == "provider" else None,
        records=records,
    )


def plan_compaction(
    inp: AssembleInput, *, target: int | None, mode: CompactionMode
) -> CompactionPlan:
    """What a compaction down to ``target`` tokens (default: the compact target) would do."""
    tools = visible_tools(inp.tools, sorted({*inp.hidden_tools, *inp.state.hidden_tools}))
    return plan_on(analyse(inp, inp.state, tools), _target(inp, target), mode)


def compacted_state(
    work: Work, plan: CompactionPlan, summary_text: str | None
) -> tuple[ContextState, SummaryMode, str]:
    """The state after ``plan`` and how its summary was made (mode and a note)."""
    _check_plan(work, plan)
    state = add_stubs(work.state, plan.stubs)
    if not plan.fold:
        return state, "deterministic", ""
    text = summary_text if summary_text is not None else plan.summary_text or ""
    how: SummaryMode = "provider" if summary_text is not None else "deterministic"
    note = "fast model" if how == "provider" else "deterministic"
    if summary_text is None and plan.mode in ("provider", "fallback"):
        note = "deterministic fallback"
    state = fold_state(
        state, plan.fold, text, how, through_seq=plan.through_seq, turn=work.inp.turn
    )
    return state.model_copy(update={"compactions": state.compactions + 1}), how, note


def _check_plan(work: Work, plan: CompactionPlan) -> None:
    known = group_of(work.groups)
    missing = [i for i in (*plan.stubs, *plan.fold) if i not in known]
    if missing:
        raise ValueError(
            f"the compaction plan names messages not in this session ({', '.join(missing[:3])}); "
            "plan again"
        )


def compaction_records(before: Work, after: Work, plan: CompactionPlan, note: str) -> list[Record]:
    fold_ids = set(plan.fold)
    records = stub_records({k: v for k, v in plan.stubs.items() if k not in fold_ids})
    if plan.fold and after.state.summary is not None:
        summary = after.state.summary
        records.append(
            Record(
                kind="fold",
                node_id=summary.node_id,
                detail=f"{plan.fold_groups} groups ({len(plan.fold)} messages, through seq "
                f"{summary.through_seq}) folded into {summary.node_id}; summary: {note}",
            )
        )
    kept = before.tokens_before(set(plan.stubs) | fold_ids)
    tier = 2 if plan.fold else 1
    records.append(
        Record(
            kind="compaction",
            detail=f"tier {tier}, target {plan.target:,}; {cache_note(kept, after.used)}",
            tokens_before=before.used,
            tokens_after=after.used,
            prefix_hash_before=before.prefix_hash(),
            prefix_hash_after=after.prefix_hash(),
        )
    )
    return records
