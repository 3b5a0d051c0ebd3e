"""A model of provider prefix caches, in tokens.

OpenAI-style (automatic): the cached part of a prompt is its longest common
token prefix with a recent prompt, rounded down to the cache granularity:
nothing below 1024 tokens, then 1024 plus whole 128-token steps. DeepSeek
caches in 64-token units.

Anthropic-style (explicit): a prompt is written to the cache at each
``cache_control`` breakpoint (of at least 1024 tokens). A later prompt reads
the longest stored entry that is a prefix of it and ends at or before its last
breakpoint; everything from there up to its last breakpoint is written anew.
(The real service only looks back about 20 blocks; this model looks back
without limit.) Entries never expire; the oldest are evicted by count.
"""

from __future__ import annotations

import hashlib
from array import array
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field

OPENAI_MINIMUM = 1024
OPENAI_STEP = 128
DEEPSEEK_STEP = 64
ANTHROPIC_MINIMUM = 1024


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix (binary search over C-speed slices)."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo] and a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def round_openai(tokens: int) -> int:
    if tokens < OPENAI_MINIMUM:
        return 0
    return OPENAI_MINIMUM + (tokens - OPENAI_MINIMUM) // OPENAI_STEP * OPENAI_STEP


def round_deepseek(tokens: int) -> int:
    return tokens // DEEPSEEK_STEP * DEEPSEEK_STEP


def _digest(tokens: Sequence[int]) -> bytes:
    return hashlib.sha1(array("Q", tokens).tobytes()).digest()


@dataclass
class AutomaticCache:
    """OpenAI / DeepSeek: remembers the last ``capacity`` prompts."""

    deepseek: bool = False
    capacity: int = 32
    recent: deque[tuple[int, ...]] = field(default_factory=deque)

    def lookup(self, tokens: tuple[int, ...]) -> int:
        best = max((common_prefix(tokens, old) for old in self.recent), default=0)
        return round_deepseek(best) if self.deepseek else round_openai(best)

    def store(self, tokens: tuple[int, ...]) -> None:
        self.recent.append(tokens)
        while len(self.recent) > self.capacity:
            self.recent.popleft()


@dataclass(frozen=True)
class CacheResult:
    read: int
    written: int


@dataclass
class BreakpointCache:
    """Anthropic: entries keyed by (prefix length, digest of the prefix)."""

    capacity: int = 256
    entries: OrderedDict[tuple[int, bytes], None] = field(default_factory=OrderedDict)

    def lookup(self, tokens: tuple[int, ...], breakpoints: Sequence[int]) -> CacheResult:
        usable = [b for b in breakpoints if b >= ANTHROPIC_MINIMUM]
        if not usable:
            return CacheResult(0, 0)
        last = max(usable)
        read = 0
        for length in sorted({n for n, _ in self.entries if read < n <= last}, reverse=True):
            if (length, _digest(tokens[:length])) in self.entries:
                read = length
                break
        return CacheResult(read=read, written=last - read)

    def store(self, tokens: tuple[int, ...], breakpoints: Sequence[int]) -> None:
        for length in breakpoints:
            if length >= ANTHROPIC_MINIMUM:
                key = (length, _digest(tokens[:length]))
                self.entries[key] = None
                self.entries.move_to_end(key)
        while len(self.entries) > self.capacity:
            self.entries.popitem(last=False)
