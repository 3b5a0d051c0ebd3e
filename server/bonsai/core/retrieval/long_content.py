"""How an earlier text is served back to the model by search: by size, never summarised.

A folded, archived or simply old answer or tool output found by ``recall`` or
brought back by reinjection is served by its token count:

- up to ``excerpt_above`` tokens: the text as it is;
- up to ``pointer_above`` tokens: a verbatim **excerpt** — the head plus the
  lines or sentences that match the question, in their original order, with
  ``[…]`` where text was left out, under a header saying it is an excerpt and
  not the original, and how to fetch the exact text;
- above: one **pointer** line saying what it is, its line count, where the
  question's words occur, and how to fetch the exact text.

A summary rewrites code, numbers and wording; an excerpt only leaves pieces
out. Every kept piece is a verbatim slice of the original. Counting is the
caller's (the session's counter), so this module stays pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from bonsai.core.retrieval.query import query_terms
from bonsai.core.retrieval.text import stem

Count = Callable[[str], int]
Tier = Literal["full", "excerpt", "pointer"]
GAP = "[…]"
LONG_LINE_CHARS = 160  # longer lines are split into sentences
FIRST_LINE_CHARS = 100
MAX_MATCH_LINES = 8  # line numbers named on a pointer line
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_MEANINGFUL = re.compile(r"[^\W_]{2,}")


@dataclass(frozen=True)
class Limits:
    excerpt_above: int = 800  # longer texts are served as an excerpt
    pointer_above: int = 3_000  # longer texts are served as a pointer line

    @property
    def head(self) -> int:
        """The token budget of an excerpt's head (the rest goes to matches)."""
        return max(1, self.excerpt_above // 4)


@dataclass(frozen=True)
class Served:
    tier: Tier
    text: str  # what the model is shown
    tokens: int  # of the original


def tier_of(tokens: int, limits: Limits) -> Tier:
    if tokens <= limits.excerpt_above:
        return "full"
    if tokens <= limits.pointer_above:
        return "excerpt"
    return "pointer"


def serve(text: str, *, what: str, query: str, fetch: str, count: Count, limits: Limits) -> Served:
    """``text`` as the model should see it. ``what`` names it ("tool result of
    read_file"); ``fetch`` is the call that returns the exact text."""
    tokens = count(text)
    tier = tier_of(tokens, limits)
    if tier == "full":
        return Served(tier, text, tokens)
    if tier == "excerpt":
        return Served(tier, excerpt(text, query, fetch, count, limits, tokens), tokens)
    return Served(tier, pointer(text, what, query, fetch, tokens), tokens)


# ------------------------------------------------------------------ pieces
def pieces(text: str) -> list[str]:
    """``text`` cut into lines, long lines further into sentences. Every piece is
    a verbatim slice and ``"".join(pieces(text)) == text``."""
    out: list[str] = []
    for line in text.splitlines(keepends=True):
        if len(line) <= LONG_LINE_CHARS:
            out.append(line)
            continue
        start = 0
        for boundary in _SENTENCE_END.finditer(line):
            out.append(line[start : boundary.end()])
            start = boundary.end()
        if start < len(line):
            out.append(line[start:])
    return out


def matching_terms(piece: str, stems: Sequence[str]) -> int:
    """How many of the question's (stemmed) terms occur in ``piece``."""
    lowered = piece.lower()
    return sum(1 for s in stems if s in lowered)


def question_stems(query: str) -> list[str]:
    return sorted({stem(t) for t in query_terms(query) if len(stem(t)) >= 3})


# ------------------------------------------------------------------ excerpt
def head_pieces(parts: Sequence[str], budget: int, count: Count) -> list[str]:
    """The leading pieces that fit ``budget`` tokens; a first piece too big on its
    own is cut to a verbatim prefix of about the budget."""
    out: list[str] = []
    used = 0
    for piece in parts:
        size = count(piece)
        if used + size > budget:
            if not out:
                out.append(piece[: max(1, len(piece) * budget // max(size, 1))])
            break
        out.append(piece)
        used += size
    return out


def excerpt(text: str, query: str, fetch: str, count: Count, limits: Limits, tokens: int) -> str:
    parts = pieces(text)
    head = head_pieces(parts, limits.head, count)
    kept: dict[int, str] = dict(enumerate(head))
    used = sum(count(p) for p in head)
    stems = question_stems(query)
    scored = [(matching_terms(p, stems), i) for i, p in enumerate(parts) if i >= len(head)]
    matches = [i for score, i in sorted(scored, key=lambda p: (-p[0], p[1])) if score]
    for index in [*matches, *_neighbours(matches)]:  # matches first, then their context
        if index in kept or not 0 <= index < len(parts):
            continue
        size = count(parts[index])
        if used + size <= limits.excerpt_above:
            kept[index] = parts[index]
            used += size
    matched = sum(1 for i in matches if i in kept)
    header = (
        f"[excerpt, not the original: the head plus {_plural(matched, 'passage')} matching "
        f"the question, verbatim, about {used} of {tokens} tokens; exact text: {fetch}]"
    )
    return header + "\n" + stitch(kept, len(parts))


def _neighbours(matches: Sequence[int]) -> list[int]:
    return [n for i in matches for n in (i - 1, i + 1)]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def stitch(kept: dict[int, str], total: int) -> str:
    """The kept pieces in order, with ``[…]`` wherever pieces were left out."""
    out: list[str] = []
    previous = -1
    for index in sorted(kept):
        if index != previous + 1:
            out.append(_gap_after(out))
        out.append(kept[index])
        previous = index
    if previous < total - 1:
        out.append(_gap_after(out))
    return "".join(out).rstrip("\n")


def _gap_after(out: list[str]) -> str:
    newline = "" if not out or out[-1].endswith("\n") else "\n"
    return f"{newline}{GAP}\n"


# ------------------------------------------------------------------ pointer
def first_meaningful_line(text: str) -> str:
    """The first line with a word in it (not a lone brace or fence), shortened."""
    for line in text.splitlines():
        stripped = " ".join(line.split())
        if _MEANINGFUL.search(stripped) and not stripped.startswith("```"):
            if len(stripped) > FIRST_LINE_CHARS:
                return stripped[: FIRST_LINE_CHARS - 1] + "…"
            return stripped
    return ""


def matching_lines(text: str, query: str) -> list[int]:
    """1-based numbers of the lines holding the question's words, best first."""
    stems = question_stems(query)
    if not stems:
        return []
    scored = [
        (matching_terms(line, stems), number)
        for number, line in enumerate(text.splitlines(), start=1)
    ]
    best = sorted((pair for pair in scored if pair[0]), key=lambda p: (-p[0], p[1]))
    return sorted(number for _, number in best[:MAX_MATCH_LINES])


def pointer(text: str, what: str, query: str, fetch: str, tokens: int) -> str:
    lines = len(text.splitlines()) or 1
    first = first_meaningful_line(text).replace('"', "'")
    where = matching_lines(text, query)
    numbers = ", ".join(map(str, where))
    found = f"; the question's words on {'line' if len(where) == 1 else 'lines'} {numbers}"
    return (
        f"[{what}: {lines} lines, about {tokens} tokens, not shown; "
        f'it begins "{first}"{found if where else ""}; exact text: {fetch}]'
    )
