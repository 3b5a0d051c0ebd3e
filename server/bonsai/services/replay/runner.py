"""Replay a recorded session through the pipeline, one model call at a time.

For every assistant message of the recording, the replay builds the request
the daemon would have sent just before it, on two sides: *raw* (the whole
history, unmanaged) and *managed* (the chosen policy, its state carried from
step to step). It counts both, measures each side's cache-eligible prefix
against that side's previous request, times the pipeline, and summarises the
rows with :func:`bonsai.core.replay.report.summarize`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from bonsai.core.context import Assembly, Budget, Item, SystemPart, TokenCounter, system_text
from bonsai.core.context.pricing import Pricing, family_rule
from bonsai.core.replay.report import (
    REWRITE_KINDS,
    ModelPrice,
    ReplayReport,
    ReplayTurn,
    summarize,
)
from bonsai.core.turn.tool_finish import finish_output
from bonsai.domain import Message
from bonsai.services.redaction import known as known_keys
from bonsai.services.replay.baselines import MaskingPolicy, PrunePolicy
from bonsai.services.replay.billing import Bill, PauseModel, call_idles
from bonsai.services.replay.policies import PipelinePolicy, PolicyName
from bonsai.services.replay.prefix import (
    Encode,
    Granularity,
    PrefixTracker,
    Unit,
    request_units,
)
from bonsai.services.replay.source import ReplaySource
from bonsai.settings import ContextSettings, ToolOutputSettings


@dataclass(frozen=True)
class ReplayConfig:
    """Everything a replay run needs besides the recording."""

    counter: TokenCounter
    family: str
    budget: Budget
    settings: ContextSettings  # effective (preset and smol applied)
    granularity: Granularity
    encode: Encode | None = None
    policy: PolicyName = "managed"
    offline: bool = True
    cache_read_price: float = 0.1
    price: ModelPrice | None = None
    tools: tuple[dict[str, Any], ...] = ()
    tool_output: ToolOutputSettings = field(default_factory=ToolOutputSettings)
    pricing: Pricing | None = None  # what the pipeline decides on (None: family rule, read price)
    pauses: PauseModel = field(
        default_factory=PauseModel
    )  # call spacing when the recording has no timestamps

    def decision_pricing(self) -> Pricing:
        """The prices the replayed pipeline pays back under (the active provider's)."""
        if self.pricing is not None:
            return self.pricing
        rule = family_rule(self.family)
        return rule.model_copy(update={"cached_read": self.cache_read_price * rule.input})


@dataclass(frozen=True)
class StepRow:
    turn: ReplayTurn
    raw_cached: int
    assembly: Assembly
    raw_bill: Bill | None = None  # size, exact shared prefix, idle (per-family billing)
    bill: Bill | None = None
    timing: str = ""  # where the idle times come from (timestamps or the pause model)


def _system_message(parts: Sequence[SystemPart]) -> Message | None:
    return Message(role="system", content=system_text(list(parts))) if parts else None


def _policy(source: ReplaySource, config: ReplayConfig) -> PipelinePolicy:
    kind = {"masking": MaskingPolicy, "prune": PrunePolicy}.get(config.policy, PipelinePolicy)
    return kind(
        name=config.policy,
        parts=[source.persona] if source.persona else [],
        tools=list(config.tools),
        budget=config.budget,
        settings=config.settings,
        family=config.family,
        counter=config.counter,
        offline=config.offline,
        pricing=config.decision_pricing(),
    )


def executed(source: ReplaySource, settings: ToolOutputSettings) -> ReplaySource:
    """``source`` with every recorded tool output as the live tool would have
    returned it: redacted, truncated, spilled (the one shared function)."""
    if not source.recorded:
        return source
    items: list[Item] = []
    for item in source.items:
        message = item.message
        if message.role == "tool":
            finished = finish_output(
                message.content, settings, message.tool_call_id or item.id, secrets=known_keys()
            )
            if finished.text != message.content:
                message = message.model_copy(update={"content": finished.text})
                item = item.model_copy(update={"message": message})
        items.append(item)
    return replace(source, items=items, recorded=False)


def replay_steps(source: ReplaySource, config: ReplayConfig) -> list[StepRow]:
    """One row per model call of ``source``. The raw side is the recording as the
    agent sent it; the managed side starts from the tool outputs as bonsai's own
    tools would have returned them (``executed``), except under ``none``, which
    reproduces the raw side byte for byte."""
    recorded = source.items
    if config.policy != "none":
        source = executed(source, config.tool_output)
    policy = _policy(source, config)
    raw_prefix = PrefixTracker(config.granularity, config.encode)
    managed_prefix = PrefixTracker(config.granularity, config.encode)
    raw_system = _system_message(policy.parts)
    idles, timing = call_idles(source.items, source.steps, source.times, config.pauses)
    pricing = config.decision_pricing()
    cold = [pricing.expired(idle) for idle in idles]
    rows: list[StepRow] = []
    for step, pos in enumerate(source.steps):
        items = source.items[:pos]
        raw_units = request_units(
            config.counter, raw_system, policy.tools, [i.message for i in recorded[:pos]]
        )
        started = time.perf_counter()
        assembly = policy.step(items, items[-1].turn if items else 0, idles[step])
        elapsed = (time.perf_counter() - started) * 1000
        system = _system_message(assembly.system)
        units = request_units(config.counter, system, assembly.tools, assembly.messages)
        turn = _turn(step, raw_units, units, managed_prefix, config, elapsed, assembly)
        raw_cached = raw_prefix.measure(raw_units)
        raw_bill = Bill(turn.raw_input_tokens, raw_prefix.common, idles[step])
        bill = Bill(turn.managed_input_tokens, managed_prefix.common, idles[step])
        if cold[step]:  # the cache expired during the pause: nothing is read from it
            turn, raw_cached = turn.model_copy(update={"cached_input_tokens": 0}), 0
        rows.append(
            StepRow(turn, raw_cached, assembly, raw_bill=raw_bill, bill=bill, timing=timing)
        )
    return rows


def _turn(
    step: int,
    raw_units: list[Unit],
    units: list[Unit],
    prefix: PrefixTracker,
    config: ReplayConfig,
    elapsed: float,
    assembly: Assembly,
) -> ReplayTurn:
    raw = sum(u[1] for u in raw_units)
    managed = sum(u[1] for u in units)
    return ReplayTurn(
        step=step,
        raw_input_tokens=raw,
        managed_input_tokens=managed,
        cached_input_tokens=prefix.measure(units),
        fits=managed <= config.budget.usable,
        raw_fits=raw <= config.budget.usable,
        events=[r.event() for r in assembly.records],
        pipeline_ms=round(elapsed, 3),
        saved_tokens=rewrite_savings(assembly),
    )


def rewrite_savings(assembly: Assembly) -> int:
    """Tokens the rewrites of this call removed (before minus after, as each
    rewrite's record measured it)."""
    saved = 0
    for record in assembly.records:
        if record.kind in REWRITE_KINDS and record.tokens_before is not None:
            saved += max(0, record.tokens_before - (record.tokens_after or 0))
    return saved


def replay(source: ReplaySource, config: ReplayConfig) -> ReplayReport:
    return summarize_rows(replay_steps(source, config), config, source.session_id)


def summarize_rows(rows: list[StepRow], config: ReplayConfig, session_id: str) -> ReplayReport:
    return summarize(
        [r.turn for r in rows],
        window=config.budget.window,
        usable=config.budget.usable,
        cache_read_price=config.cache_read_price,
        raw_cached=[r.raw_cached for r in rows],
        session_id=session_id,
        price=config.price,
        timing=rows[0].timing if rows else "",
    )
