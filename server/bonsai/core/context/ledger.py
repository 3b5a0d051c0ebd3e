"""The ledger: one row per node, and totals that equal the count of the wire.

Rows in a sent state (full, pinned, stubbed, summarized) add up exactly to the
counter's count of the assembled system message, tools and messages: parts of
one counted unit (the system message, the tool block, the tail message) share
its count, the first part carrying the framing and boundary tokens.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import chain
from typing import Any

from bonsai.core.context.context_state import ArchiveEntry
from bonsai.core.context.frame import plan_block, tool_name
from bonsai.core.context.pipeline_types import (
    ON_WIRE_STATES,
    Confidence,
    LedgerRow,
    SystemPart,
    Totals,
)
from bonsai.core.context.tape import Snapshot, Tape
from bonsai.core.context.text import message_kind, message_label
from bonsai.core.context.view import Node, applied_archives, changed_keys
from bonsai.core.context.work import Work

_RANK: dict[str, int] = {"low": 0, "high": 1, "exact": 2}


def weakest(levels: list[str]) -> Confidence:
    found = set(levels)  # a few distinct levels: rank those, not every row
    level = min(found, key=lambda c: _RANK.get(c, 0), default="exact")
    return "low" if level not in _RANK else level  # type: ignore[return-value]


def _part_kind(part: SystemPart) -> str:
    return part.id.split(":", 2)[1] if part.id.startswith("sys:") else "system"


def _share(total: int, counts: list[int]) -> list[int]:
    """``counts`` with the first adjusted so the list sums to ``total``."""
    if not counts:
        return []
    return [total - sum(counts[1:]), *counts[1:]]


def _part_row(part: SystemPart, tokens: int, conf: Confidence, reason: str = "") -> LedgerRow:
    return LedgerRow(
        id=part.id,
        kind=_part_kind(part),
        section="system",
        label=part.label,
        tokens=tokens,
        confidence=conf,
        state="full",
        reason=reason,
    )


def system_rows(work: Work) -> list[LedgerRow]:
    counter, frame = work.inp.counter, work.frame
    conf = weakest([frame.confidence])
    counts = [counter.count_text(p.text).tokens for p in frame.system]
    rows = [
        _part_row(p, t, conf)
        for p, t in zip(frame.system, _share(frame.system_tokens, counts), strict=True)
    ]
    plan = plan_block(work.state, work.inp.settings)
    tail: list[tuple[SystemPart, str]] = []
    if frame.moved is not None:
        tail.append((frame.moved, "sent as the newest message (rolling prefix cache)"))
    if plan is not None:
        tail.append((SystemPart(id="ctx:plan", label="recitation plan", text=plan), "recitation"))
    counts = [counter.count_text(p.text).tokens for p, _ in tail]
    shares = _share(frame.tail_tokens, counts)
    rows += [_part_row(p, t, conf, why) for (p, why), t in zip(tail, shares, strict=True)]
    return rows


def tool_rows(work: Work, all_tools: list[dict[str, Any]]) -> list[LedgerRow]:
    counter, sent = work.inp.counter, work.frame.tools
    rows: list[LedgerRow] = []
    if sent:
        singles = [counter.count_tools([t]) for t in sent]
        block = 2 * singles[0].tokens - counter.count_tools([sent[0], sent[0]]).tokens
        counts = _share(work.frame.tools_tokens, [s.tokens - block for s in singles])
        for tool, single, tokens in zip(sent, singles, counts, strict=True):
            rows.append(_tool_row(tool, tokens, single.confidence, "full", ""))
    names = {tool_name(t) for t in sent}
    for tool in all_tools:
        if tool_name(tool) not in names:
            count = counter.count_tools([tool])
            rows.append(_tool_row(tool, count.tokens, count.confidence, "dropped", "hidden tool"))
    return rows


def _tool_row(
    tool: dict[str, Any], tokens: int, conf: Confidence, state: Any, why: str
) -> LedgerRow:
    name = tool_name(tool)
    return LedgerRow(
        id=f"tool:{name}",
        kind="tool",
        section="tools",
        label=name,
        tokens=tokens,
        confidence=conf,
        state=state,
        reason=why,
    )


_SECTIONS = {"stubbed": "stubs", "summarized": "summaries", "archived": "episodes"}


def _node_row(node: Node, work: Work, step: str | None) -> LedgerRow:
    """The ledger row of a message node (``step``: the head of its step), reused
    from the memo while it is unchanged."""
    item, memo = node.item, work.inp.memo
    tokens = node.full_tokens if node.state == "dropped" else node.tokens
    reason = node.reason or work.protected.get(item.id, "")
    call = work.calls.get(item.message.tool_call_id or "")  # the label names it
    key = (node.state, tokens, reason, node.confidence, step, call, item.turn)
    if memo is not None:
        hit = memo.rows.get(item.id, item.message)
        if hit is not None and hit[0] == key:
            return hit[1]  # type: ignore[no-any-return]
    row = _row(node, reason, step, work.calls)
    if memo is not None:
        memo.rows.put(item.id, item.message, (key, row))
    return row


def _row(
    node: Node, reason: str, step: str | None, calls: Mapping[str, tuple[str, str]]
) -> LedgerRow:
    item, message = node.item, node.item.message
    return LedgerRow(
        id=item.id,
        kind=message_kind(message),
        section=_SECTIONS.get(node.state, "messages"),  # type: ignore[arg-type]
        label=message_label(message, calls.get(message.tool_call_id or "")),
        tokens=node.full_tokens if node.state == "dropped" else node.tokens,
        confidence=node.confidence,
        state=node.state,
        reason=reason,
        turn=item.turn,
        images=message.images,
        step=step,
    )


def _step_heads(work: Work) -> dict[str, str]:
    """Each tool result's step head (the assistant message that made the call)."""
    return {rid: g.ids[0] for g in work.groups if g.kind == "step" for rid in g.ids[1:]}


def message_rows(work: Work, snap: Snapshot | None = None) -> list[LedgerRow]:
    """The rows of the messages (``snap``: the work's tape, brought to it)."""
    if snap is not None and snap.current:
        return _rows_on_tape(work, snap.tape)
    pos = work.summary_at
    archives = applied_archives(work.inp.items, work.state)
    heads = _step_heads(work)
    rows: list[LedgerRow] = []
    for i, node in enumerate(work.nodes):
        if i == pos and work.state.summary is not None:
            rows.append(_summary_row(work))
        rows.extend(_rows_of(node, _node_row(node, work, heads.get(node.item.id)), archives))
    return rows


def _rows_of(
    node: Node, row: LedgerRow, archives: Mapping[str, ArchiveEntry]
) -> tuple[LedgerRow, ...]:
    if node.state == "archived" and node.sent:  # the card rides on the first message
        return (_card_row(node, archives[node.item.id]), row.model_copy(update={"tokens": 0}))
    return (row,)


def _rows_on_tape(work: Work, tape: Tape) -> list[LedgerRow]:
    """``message_rows`` from the rows the tape keeps: rebuilt only where the node
    changed (the tape marks them stale) or the protection reason did."""
    protected = work.protected
    if protected is not tape.row_reasons:
        changed = changed_keys(tape.row_reasons, protected)
        if changed and tape.duplicates:
            tape.stale.update(range(len(tape.rows)))
        for item_id in changed:
            if (p := tape.pos.get(item_id)) is not None:
                tape.stale.add(p)
        tape.row_reasons = protected
    archives = tape.marks.archived if tape.marks is not None else {}
    for p in tape.stale:
        node = work.nodes[p]
        reason = node.reason or protected.get(node.item.id, "")
        row = _row(node, reason, tape.heads.get(node.item.id), tape.calls)
        tape.rows[p] = _rows_of(node, row, archives)
    tape.stale = set()
    pos = work.summary_at
    if pos is None or work.state.summary is None:
        return list(chain.from_iterable(tape.rows))  # type: ignore[arg-type]
    before = chain.from_iterable(tape.rows[:pos])  # type: ignore[arg-type]
    after = chain.from_iterable(tape.rows[pos:])  # type: ignore[arg-type]
    return [*before, _summary_row(work), *after]


def _card_row(node: Node, entry: ArchiveEntry) -> LedgerRow:
    """An archived episode's card: what it costs now, what it stands for."""
    return LedgerRow(
        id=f"ep:{entry.number}",
        kind="episode",
        section="episodes",
        label=f'episode #{entry.number} "{entry.title}" ({len(entry.ids)} messages)',
        tokens=node.tokens,
        confidence=node.confidence,
        state="archived",
        reason=(
            f"{len(entry.ids)} messages ({entry.tokens_before:,} tokens) archived as this card; "
            f'the model can recall({{"episode": {entry.number}}}), the user can restore it'
        ),
        turn=entry.turn,
    )


def _summary_row(work: Work) -> LedgerRow:
    summary = work.state.summary
    assert summary is not None
    assert work.summary_at is not None
    first = work.nodes[work.summary_at].item.seq
    return LedgerRow(
        id=summary.node_id,
        kind="summary",
        section="summaries",
        label=f"summary of {len(summary.folded)} messages (seq {first}–{summary.through_seq})",
        tokens=work.summary_tokens,
        confidence=weakest([work.frame.confidence]),
        state="summarized",
        reason=f"{summary.mode} summary, lossy; restore it to re-splice the originals",
        turn=summary.turn,
    )


def ledger_rows(work: Work, all_tools: list[dict[str, Any]]) -> list[LedgerRow]:
    return ledger(work, all_tools)[0]


def ledger(work: Work, all_tools: list[dict[str, Any]]) -> tuple[list[LedgerRow], Totals]:
    """``ledger_rows`` and their ``totals``; the messages' part of the totals from
    the tape's running sums when the work is the tape's current analysis."""
    snap = work.snapshot
    if snap is None:
        head = [*system_rows(work), *tool_rows(work, all_tools)]
    else:
        head = snap.tape.head_rows(
            work.frame, all_tools, lambda: [*system_rows(work), *tool_rows(work, all_tools)]
        )
    if snap is not None and not snap.current:  # a stage tried another state: come back
        snap = snap.tape.sync(work.inp.items, work.state, work.inp.counter, work.inp.memo)
    messages = message_rows(work, snap)
    if snap is None or not snap.current:
        rows = [*head, *messages]
        return rows, totals(work, rows)
    on_wire = [r for r in head if r.state in ON_WIRE_STATES]
    used = sum(r.tokens for r in on_wire) + snap.cum[-1]
    levels = {r.confidence for r in on_wire if r.tokens} | snap.tape.confidences()
    if work.summary_at is not None and work.state.summary is not None:
        used += work.summary_tokens
        if work.summary_tokens:
            levels.add(weakest([work.frame.confidence]))
    return [*head, *messages], _totals(work, used, weakest(list(levels)))


def totals(work: Work, rows: list[LedgerRow]) -> Totals:
    used = sum(r.tokens for r in rows if r.state in ON_WIRE_STATES)
    # what is on the wire: a message folded into the summary counts 0 tokens there
    level = weakest([r.confidence for r in rows if r.state in ON_WIRE_STATES and r.tokens])
    return _totals(work, used, level)


def _totals(work: Work, used: int, confidence: Confidence) -> Totals:
    usable = work.usable
    return Totals(
        window=work.inp.budget.window,
        usable=usable,
        used=used,
        percent=round(100 * used / usable, 1),
        reserve=work.inp.budget.reserve,
        confidence=confidence,
    )
