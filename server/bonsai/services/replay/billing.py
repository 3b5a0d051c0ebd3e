"""What a replayed session would be billed under each provider family's rules,
and when its calls were made (recording timestamps, or a pause model).

Each model call of a replay has a size, an exact cache-eligible prefix (the
tokens shared with the previous request of the same side) and the time since
the previous call. Under a family's rule (``bonsai.core.context.pricing.FAMILY_RULES``)
the cached part is that prefix rounded down to the family's cache granularity,
or nothing when the pause was longer than the family's cache TTL; the rest is
billed at the write price (Anthropic 1.25×, others 1×) and the cached part at
the read price (0.1× in every reference rule).

**Times.** A recording with timestamps gives each call the time of the last
message before it (the request went out then). Without timestamps the
:class:`PauseModel` says how far apart calls are: ``step_seconds`` between agent
steps, ``user_seconds`` before a call that answers a new user message after a
reply that ended the agent's turn (no tool calls: a person read it and typed).
Both default to 30 s (recorded benchmark runs have no person in the loop);
``--pause-user 600`` models one. The report states which was used.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from bonsai.core.context import Item
from bonsai.core.context.harness import is_harness_note
from bonsai.core.context.pricing import FAMILY_RULES, FamilyName, Pricing
from bonsai.services.replay.prefix import granularity_for

FAMILIES: tuple[FamilyName, ...] = ("openai", "anthropic", "deepseek")


@dataclass(frozen=True)
class PauseModel:
    """How far apart calls are when the recording has no timestamps."""

    step_seconds: float = 30.0  # model time plus tool time of one agent step
    user_seconds: float = 30.0  # before a call answering a person (the user) after a final reply

    def describe(self) -> str:
        return (
            f"pause model: {self.step_seconds:g} s between agent steps, "
            f"{self.user_seconds:g} s after the agent ends its turn and the user writes"
        )


def call_idles(
    items: Sequence[Item],
    steps: Sequence[int],
    times: Sequence[float | None] | None,
    pauses: PauseModel,
) -> tuple[list[float | None], str]:
    """Seconds since the previous call, per call (``None`` for the first), and
    where they come from. ``steps`` are the positions of the assistant messages;
    ``times`` (one per item, when the recording has them) are epoch seconds."""
    if times is not None and len(times) == len(items) and all(t is not None for t in times):
        stamps = [_request_time(times, pos) for pos in steps]
        gaps: list[float | None] = [None, *(max(0.0, b - a) for a, b in pairwise(stamps))]
        return gaps[: len(steps)], "recording timestamps"
    idles: list[float | None] = []
    for n, pos in enumerate(steps):
        if n == 0:
            idles.append(None)
            continue
        reply = items[steps[n - 1]].message
        since = items[steps[n - 1] + 1 : pos]
        person = not reply.tool_calls and any(
            i.message.role == "user" and not is_harness_note(i.message.content) for i in since
        )
        idles.append(pauses.user_seconds if person else pauses.step_seconds)
    return idles, pauses.describe()


def _request_time(times: Sequence[float | None], pos: int) -> float:
    """A call goes out right after the last message before its reply."""
    before = times[pos - 1] if pos > 0 else times[pos]
    return float(before if before is not None else times[pos] or 0.0)


@dataclass(frozen=True)
class Bill:
    """One call of one side: its size, exact shared prefix and idle time."""

    total: int
    common: int
    idle: float | None


def cached_under(bill: Bill, family: str, pricing: Pricing) -> int:
    """The tokens ``family`` serves from its cache for this call."""
    if pricing.expired(bill.idle):
        return 0
    return min(granularity_for(family).apply(bill.common), bill.total)


def cost(bills: Iterable[Bill], family: FamilyName) -> float:
    """Input cost of ``bills`` under the family's rule, in uncached-token units."""
    rule = FAMILY_RULES[family]
    total = 0.0
    for bill in bills:
        cached = cached_under(bill, family, rule)
        total += rule.cost(bill.total - cached, cached)
    return total
