"""Tier 2: fold the oldest non-protected groups into the rolling summary.

Whole groups only (a tool call and its result are folded together); protected
groups are skipped and stay verbatim in place. The summary is built from the
originals of the newly folded span merged into the previous summary. Its
Current goal quotes the latest and the first user message, unless one stays in
the request in full: then a short reference stands in for it.
"""

from __future__ import annotations

from dataclasses import dataclass

from bonsai.core.context.context_state import ContextState, SummaryMode, SummaryState
from bonsai.core.context.groups import Group
from bonsai.core.context.harness import person_messages
from bonsai.core.context.pipeline_types import Item
from bonsai.core.context.protect import protected_groups
from bonsai.core.context.summary import update_summary
from bonsai.core.context.trace import view_traces
from bonsai.core.context.view import summary_message
from bonsai.core.context.work import Work

CHARS_PER_SUMMARY_TOKEN = 3
MIN_SUMMARY_TOKENS = 200
FIRST_SUMMARY_GUESS = 300


@dataclass(frozen=True, slots=True)
class Fold:
    ids: list[str]  # item ids newly folded
    span: list[Item]  # their items (originals), in order
    groups: int
    summary: str  # deterministic summary text after this fold
    summary_tokens: int
    projected: int  # request tokens after the fold


def summary_budget_chars(work: Work) -> int:
    """The summary's size limit: ``summary_fraction`` of the usable window (at least
    200 tokens), never above ``reflect_above_tokens``; in characters."""
    settings = work.inp.settings
    share = int(work.usable * settings.summary_fraction)
    tokens = min(settings.reflect_above_tokens, max(MIN_SUMMARY_TOKENS, share))
    return tokens * CHARS_PER_SUMMARY_TOKEN


def foldable_groups(work: Work) -> list[Group]:
    """Groups that may be folded now, oldest first."""
    keep = protected_groups(work.groups, work.protected)
    sent = {n.item.id for n in work.nodes if n.sent}
    return [
        g
        for g in work.groups
        if g.index not in keep and g.kind != "system" and any(i in sent for i in g.ids)
    ]


LATEST_USER_REF = "(the latest user message, sent in full)"
FIRST_USER_REF = "(the first user message, sent in full)"


def goal_and_task(work: Work, fold_ids: list[str]) -> tuple[str, str]:
    """What the summary's Current goal quotes: the latest and the first user
    message, or a short reference to one that stays in the request in full
    after this fold (quoting it again would send the same words twice)."""
    users = person_messages(work.inp.items)
    if not users:
        return "", ""
    gone = set(fold_ids) | work.state.folded() | set(work.state.stubs) | set(work.state.drops)
    sent = {n.item.id for n in work.nodes if n.state in ("full", "pinned")}
    kept = {i.id for i in users if i.id in sent and i.id not in gone}
    latest, first = users[-1], users[0]
    goal = LATEST_USER_REF if latest.id in kept else latest.message.content
    if first.id == latest.id:
        return goal, ""
    return goal, FIRST_USER_REF if first.id in kept else first.message.content


def _summary_tokens(work: Work, text: str, first_seq: int, through: int) -> int:
    probe = SummaryState(
        text=text, through_seq=through, folded=[], mode="deterministic", revision=1, turn=0
    )
    return work.inp.counter.count_message(summary_message(probe, first_seq)).tokens


def choose_fold(work: Work, target: int) -> Fold | None:
    """Fold groups oldest first until the request (with the new summary) is at ``target``;
    all foldable groups when even that is not enough. ``None`` when nothing may be folded."""
    candidates = foldable_groups(work)
    if not candidates:
        return None
    sizes = {n.item.id: n.tokens for n in work.nodes}
    sent = {n.item.id for n in work.nodes if n.sent}
    previous = work.state.summary.text if work.state.summary else None
    base = work.used - work.summary_tokens  # the request without the old summary
    estimate = max(work.summary_tokens, FIRST_SUMMARY_GUESS)
    chosen: list[Group] = []
    saved = 0
    for group in candidates:
        chosen.append(group)
        saved += sum(sizes[i] for i in group.ids if i in sent)
        if base - saved + estimate > target:
            continue
        fold = _fold(work, chosen, previous, sizes, sent)
        if fold.projected <= target:
            return fold
        estimate = fold.summary_tokens
    return _fold(work, chosen, previous, sizes, sent)


def _fold(
    work: Work, chosen: list[Group], previous: str | None, sizes: dict[str, int], sent: set[str]
) -> Fold:
    ids = [i for g in chosen for i in g.ids if i in sent]
    by_id = {item.id: item for item in work.inp.items}
    span = [by_id[i] for i in ids]
    goal, task = goal_and_task(work, ids)
    budget = summary_budget_chars(work)
    share = work.inp.settings.summary_trace_share
    text = update_summary(
        previous,
        span,
        work.calls,
        goal=goal,
        task=task,
        max_chars=budget,
        traces=view_traces(span, work.calls, work.inp.items, _kept_text(work, ids))
        if share
        else (),
        trace_chars=int(budget * share),
        memo=work.inp.memo,
    )
    folded_before = work.state.folded()
    seqs = [by_id[i].seq for i in (*folded_before, *ids) if i in by_id]
    first, through = min(seqs), max(seqs)
    new_summary = _summary_tokens(work, text, first, through)
    projected = work.used - work.summary_tokens - sum(sizes[i] for i in ids) + new_summary
    return Fold(
        ids=ids,
        span=span,
        groups=len(chosen),
        summary=text,
        summary_tokens=new_summary,
        projected=projected,
    )


def _kept_text(work: Work, fold_ids: list[str]) -> str:
    """What the request still sends after folding ``fold_ids`` (its messages' text)."""
    gone = set(fold_ids)
    return "\n".join(
        n.message.content for n in work.nodes if n.message is not None and n.item.id not in gone
    )


def fold_state(
    state: ContextState,
    ids: list[str],
    text: str,
    mode: SummaryMode,
    *,
    through_seq: int,
    turn: int,
) -> ContextState:
    """The state with ``ids`` folded into an updated summary (their stubs cleared)."""
    folded = sorted(set(state.folded()) | set(ids))
    revision = state.summary.revision + 1 if state.summary else 1
    summary = SummaryState(
        text=text, through_seq=through_seq, folded=folded, mode=mode, revision=revision, turn=turn
    )
    stubs = {k: v for k, v in state.stubs.items() if k not in set(ids)}
    return state.model_copy(update={"summary": summary, "stubs": stubs, "background": None})
