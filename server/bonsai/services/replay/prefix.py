"""The cache-eligible prefix of a request: how much a provider's prompt cache
could serve, given the previous request on the same side.

A request is a list of units (tool definitions, the system message, each
message). Units equal to the previous request's, from the start, are served
whole; inside the first differing unit the common prefix is measured in
tokens; the total is then rounded down to the provider's cache granularity
(OpenAI: nothing below 1,024 tokens, then 128-token steps).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bonsai.core.context import TokenCounter
from bonsai.domain import Message

Encode = Callable[[str], Sequence[int]]


@dataclass(frozen=True)
class Granularity:
    minimum: int  # a prefix shorter than this is not cached at all
    step: int  # above the minimum, cached length is a multiple of this (from the minimum)
    name: str

    def apply(self, tokens: int) -> int:
        if tokens < self.minimum:
            return 0
        return self.minimum + (tokens - self.minimum) // self.step * self.step


GRANULARITY: dict[str, Granularity] = {
    "openai": Granularity(1024, 128, "OpenAI: 1,024 tokens, then 128-token steps"),
    "anthropic": Granularity(1024, 1, "Anthropic: breakpoints, at least 1,024 tokens"),
    "deepseek": Granularity(64, 64, "DeepSeek: 64-token units"),
}


def granularity_for(family: str) -> Granularity:
    return GRANULARITY.get(family, GRANULARITY["openai"])


Unit = tuple[Any, int, str]  # (equality key, tokens, text for partial matching)


def render(message: Message) -> str:
    calls = "".join(f"\n{c.name}({c.arguments})" for c in message.tool_calls)
    head = f"{message.role}:{message.name or ''}:{message.tool_call_id or ''}"
    return f"{head}\n{message.content}{calls}"


def request_units(
    counter: TokenCounter,
    system: Message | None,
    tools: list[dict[str, Any]],
    messages: list[Message],
) -> list[Unit]:
    units: list[Unit] = []
    if tools:
        units.append((("tools", repr(tools)), counter.count_tools(tools).tokens, ""))
    for message in ([system] if system else []) + messages:
        units.append((message, counter.count_message(message).tokens, ""))
    return units


class PrefixTracker:
    """Remembers the previous request of one side and measures the next one's prefix."""

    def __init__(self, granularity: Granularity, encode: Encode | None) -> None:
        self.granularity = granularity
        self.encode = encode
        self.previous: list[Unit] = []
        self.common = 0  # the last measure's exact shared prefix, before granularity

    def measure(self, units: list[Unit]) -> int:
        """The cache-eligible prefix of ``units`` (then remembered as the previous request)."""
        common = 0
        for (key, tokens, _), (old_key, old_tokens, _) in zip(units, self.previous, strict=False):
            if key == old_key:
                common += tokens
                continue
            common += min(self._partial(key, old_key), tokens, old_tokens)
            break
        self.previous = units
        total = sum(u[1] for u in units)
        self.common = min(common, total)
        return min(self.granularity.apply(common), total)

    def _partial(self, key: Any, old_key: Any) -> int:
        """Common leading tokens of two differing messages of the same role."""
        if not isinstance(key, Message) or not isinstance(old_key, Message):
            return 0
        if key.role != old_key.role:
            return 0
        a, b = render(key), render(old_key)
        if self.encode is None:
            return _common_chars(a, b) // 4
        ta, tb = self.encode(a), self.encode(b)
        n = 0
        for x, y in zip(ta, tb, strict=False):
            if x != y:
                break
            n += 1
        return n


def _common_chars(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
