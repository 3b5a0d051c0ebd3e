"""Background summarization: when to start one, when to wait, whether it is fresh.

Opt-in (``background_summary``). Crossing ``soft_fraction`` starts a summary off
the critical path; a turn at the compaction trigger waits for a running one.
A summary records the last seq it covers: when the fold reaches further, the
summary is extended with the newer span before use, never applied stale.
"""

from __future__ import annotations

from typing import Literal

from bonsai.core.context.context_state import BackgroundSummary
from bonsai.core.context.pipeline_types import Item
from bonsai.core.context.summary import update_summary
from bonsai.core.context.trace import view_traces
from bonsai.settings import ContextSettings

Action = Literal["none", "start", "wait"]
Freshness = Literal["use", "extend", "none"]


def background_action(
    used: int,
    usable: int,
    settings: ContextSettings,
    *,
    running: bool,
    summary: BackgroundSummary | None,
) -> Action:
    """What the daemon should do about a background summary at this occupancy."""
    if not settings.background_summary or settings.summary_mode != "provider":
        return "none"
    if used > settings.compact_trigger * usable:
        return "wait" if running else "none"
    if used > settings.soft_fraction * usable and not running and summary is None:
        return "start"
    return "none"


def freshness(summary: BackgroundSummary | None, fold_through_seq: int) -> Freshness:
    """``use`` when the summary covers the fold, ``extend`` when the fold reaches
    past it, ``none`` when there is no summary."""
    if summary is None:
        return "none"
    return "use" if summary.through_seq >= fold_through_seq else "extend"


def ready_summary(
    summary: BackgroundSummary,
    items: list[Item],
    fold_ids: list[str],
    calls: dict[str, tuple[str, str]],
    *,
    goal: str,
    max_chars: int,
    task: str = "",
    trace_share: float = 0.0,
) -> str:
    """The background summary made current for a fold: extended (deterministically,
    as an update) with the folded items newer than what it covers."""
    wanted = set(fold_ids)
    newer = [i for i in items if i.id in wanted and i.seq > summary.through_seq]
    if not newer:
        return summary.text
    return update_summary(
        summary.text,
        newer,
        calls,
        goal=goal,
        task=task,
        max_chars=max_chars,
        traces=view_traces(newer, calls, items) if trace_share else (),
        trace_chars=int(max_chars * trace_share),
    )
