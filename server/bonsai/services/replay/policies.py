"""What the replay sends at each step: bonsai's pipeline, or a baseline.

- ``managed``: ``assemble`` with the state carried from step to step exactly as
  the daemon carries it; when the pipeline asks for a model summary
  (``summary_due``) an offline replay applies the deterministic fallback, as
  the daemon does when the fast model fails.
- ``none``: the same pipeline with every stage disabled: reproduces the raw
  history byte for byte (the ``--no-manage`` check).
- ``naive``: summarise everything but the last step once the request passes 95%
  of the usable window (the common "auto-compact" policy), for comparison.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from bonsai.core.context import (
    AssembleInput,
    Assembly,
    AssemblyMemo,
    Budget,
    ContextState,
    Item,
    Record,
    SystemPart,
    TokenCounter,
    apply_compaction,
    assemble,
    plan_compaction,
    read_reuse,
)
from bonsai.core.context.pricing import Pricing
from bonsai.settings import ContextSettings

PolicyName = Literal["managed", "none", "naive", "masking", "prune"]
NEVER = 1e9  # a trigger fraction no request reaches
NAIVE_TRIGGER = 0.95


def disabled(settings: ContextSettings) -> ContextSettings:
    return settings.model_copy(
        update={"gc_trigger": NEVER, "compact_trigger": NEVER, "payback_horizon": 0.0}
    )


def naive_settings(settings: ContextSettings) -> ContextSettings:
    return disabled(settings).model_copy(
        update={
            "min_stub_tokens": 10**12,  # no tier 1: everything goes into the summary
            "keep_recent_groups": 1,
            "keep_user_messages": 0,
            "summary_mode": "deterministic",
        }
    )


class Policy(Protocol):
    name: PolicyName

    def step(self, items: list[Item], turn: int, idle: float | None = None) -> Assembly: ...


@dataclass
class PipelinePolicy:
    """Runs the pipeline; ``name`` picks the settings variant."""

    name: PolicyName
    parts: list[SystemPart]
    tools: list[dict[str, Any]]
    budget: Budget
    settings: ContextSettings
    family: str
    counter: TokenCounter
    offline: bool = True
    reuse: bool = True
    pricing: Pricing | None = None  # what rewrites pay back under; its TTL decides expiry
    state: ContextState = field(default_factory=ContextState)
    log: list[Item] = field(default_factory=list)
    memo: AssemblyMemo = field(default_factory=AssemblyMemo)

    def __post_init__(self) -> None:
        if self.name in ("none", "masking"):
            self.settings = disabled(self.settings)
        elif self.name in ("naive", "prune"):
            self.settings = naive_settings(self.settings)

    def _input(
        self, items: list[Item], turn: int, state: ContextState, idle: float | None = None
    ) -> AssembleInput:
        return AssembleInput(
            parts=self.parts,
            tools=self.tools,
            items=items,
            state=state,
            budget=self.budget,
            settings=self.settings,
            family=self.family,
            counter=self.counter,
            turn=turn,
            memo=self.memo,
            pricing=self.pricing,
            idle_seconds=idle,
        )

    def step(self, items: list[Item], turn: int, idle: float | None = None) -> Assembly:
        """The request before the next recorded reply; ``idle``: seconds since the
        previous call (past the pricing's TTL the cache has expired)."""
        reused = self._append(items)
        items = self.log
        if self.name != "managed":
            idle = None  # the baselines know nothing of cache lifetimes
        assembly = assemble(self._input(items, turn, self.state, idle))
        if self.name in ("naive", "prune"):
            assembly = self._naive(assembly, items, turn)
        elif assembly.summary_due:
            assembly = self._summarise(assembly, items, turn)
        self.state = assembly.state
        if reused:
            assembly = assembly.model_copy(update={"records": [*reused, *assembly.records]})
        return assembly

    def _append(self, items: list[Item]) -> list[Record]:
        """Take the new recorded items into the log, as the daemon would have stored
        them: a repeated read of unchanged bytes becomes a read-reuse pointer."""
        if len(items) < len(self.log) or not self._same_ids(items):
            raise ValueError("replay items must grow append-only from step to step")
        records: list[Record] = []
        for item in items[len(self.log) :]:
            evidence = item.message.evidence
            pointer = None
            if self.reuse and self.name == "managed" and evidence is not None:
                pointer = read_reuse(
                    self.log,
                    evidence,
                    explicit=False,
                    state=self.state,
                    text=item.message.content,
                )
            if pointer is not None:
                message = item.message.model_copy(update={"content": pointer})
                item = item.model_copy(update={"message": message})
                detail = f"{item.id} answered with a pointer instead of the bytes"
                records.append(Record(kind="reuse", node_id=item.id, detail=detail))
            self.log.append(item)
        return records

    def _same_ids(self, items: list[Item]) -> bool:
        return [i.id for i in items[: len(self.log)]] == [i.id for i in self.log]

    def _summarise(self, first: Assembly, items: list[Item], turn: int) -> Assembly:
        """Tier 2 the way the daemon runs it; offline, the deterministic fallback."""
        if not self.offline:
            raise NotImplementedError("online replay (a fast model per summary) is not built yet")
        inp = self._input(items, turn, first.state)
        plan = plan_compaction(inp, target=None, mode="provider")
        if plan.tier == 0:
            return first
        second = apply_compaction(inp, plan, None)
        return second.model_copy(
            update={"records": merge_compactions(first.records, second.records)}
        )

    def _naive(self, first: Assembly, items: list[Item], turn: int) -> Assembly:
        if first.totals.used <= NAIVE_TRIGGER * self.budget.usable:
            return first
        inp = self._input(items, turn, first.state)
        plan = plan_compaction(inp, target=1, mode="deterministic")
        if plan.tier == 0:
            return first
        return apply_compaction(inp, plan, None)


def merge_compactions(first: list[Record], second: list[Record]) -> list[Record]:
    """One compaction made in two passes (tier 1, then tier 2 with a summary)
    reads as one event: the second pass's record, measured from before the first."""
    opening = next((r for r in first if r.kind == "compaction"), None)
    out = [r for r in first if r.kind != "compaction"]
    for record in second:
        if record.kind == "compaction" and opening is not None:
            record = record.model_copy(
                update={
                    "tokens_before": opening.tokens_before,
                    "prefix_hash_before": opening.prefix_hash_before,
                }
            )
        out.append(record)
    return out
