"""Dates in memory entries and in questions, and the date-match prior.

An entry's dates are its front matter ``created``/``updated`` plus the dates
written in its body (``2026-03-14``, ``14 March 2026``, ``March 14, 2026``,
``March 2026``). A question's *window* is the span it asks about: "in March
2026", "before 2026-04-01", "after May 2025", "last month", "last week",
"this year", "in 2025". An entry with a date inside the window gets
``date_match`` added to its score; nothing else changes, so a question without
a date ranks exactly as before. A question asking *when* something happened
(:func:`asks_when`) names no span; the entries whose text says when
(:func:`mentions_time`: a date, or "last Saturday", "two weeks ago") get a
smaller bonus instead. ``today`` is passed in: core reads no clock.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable, Mapping
from datetime import date, timedelta
from typing import Any

MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"  # noqa: E501
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})\s+{_MONTH}\.?,?\s+(\d{{4}})\b", re.I)
_MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH}\.?\s+(\d{{1,2}}),?\s+(\d{{4}})\b", re.I)
_MONTH_YEAR = re.compile(rf"\b{_MONTH}\.?\s+(\d{{4}})\b", re.I)
_YEAR_MONTH = re.compile(r"\b(\d{4})-(\d{2})\b(?!-\d)")
_YEAR = re.compile(r"\b(?:in|during|of|from)\s+((?:19|20)\d{2})\b", re.I)
_RELATIVE = re.compile(
    r"\b(last|this|past|previous)\s+(week|month|year)\b|\b(yesterday|today)\b", re.I
)
_DIRECTION = re.compile(r"\b(before|after|since|until|prior to|earlier than|later than)\s*$", re.I)
_LATEST = re.compile(
    r"\b(latest|most recent|newest|lately|(?:last|latest) (?:change|update)s?)\b", re.I
)
_DAY_NAMES = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_SEASON = r"(?:summer|winter|spring|autumn|fall)"
_COUNT = r"(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple of|several)"
_TIME_WORDS = re.compile(
    rf"\b(?:yesterday|today|tonight|tomorrow"
    rf"|this\s+(?:morning|afternoon|evening|week|weekend|month|year|{_SEASON})"
    rf"|(?:last|next|past|previous)\s+(?:night|week|weekend|month|year|{_SEASON}|{_DAY_NAMES})"
    rf"|{_COUNT}\s+(?:days?|weeks?|months?|years?)\s+ago"
    rf"|(?:on|this)\s+{_DAY_NAMES}|(?:in|since|during|until)\s+(?:{_MONTH}|(?:19|20)\d{{2}}))\b",
    re.I,
)
_ASKS_WHEN = re.compile(
    r"(?:^|[.?!;:]\s*|,\s*(?:and|but)?\s*|\band\s+)when\s+"
    r"(?:did|was|were|is|are|do|does|will|would|has|have|had|can|could|should)\b"
    r"|\bwhat\s+(?:day|date|month|year|week|time)\s+"
    r"(?:did|was|were|is|are|do|does|will|has|have|had)\b|\bhow\s+long\s+ago\b",
    re.I,
)
MAX_BODY_DATES = 8

Span = tuple[date, date]  # inclusive


def _safe(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _month_span(year: int, month: int) -> Span | None:
    if not 1 <= month <= 12 or not 1900 <= year <= 2200:
        return None
    return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])


def date_mentions(text: str) -> list[tuple[int, Span]]:
    """Every date or month written in ``text``: (offset, inclusive span), in order."""
    found: list[tuple[int, int, Span]] = []
    taken: list[tuple[int, int]] = []

    def add(match: re.Match[str], span: Span | None) -> None:
        if span is None or any(s < match.end() and match.start() < e for s, e in taken):
            return
        taken.append((match.start(), match.end()))
        found.append((match.start(), match.end(), span))

    for m in _ISO.finditer(text):
        day = _safe(int(m[1]), int(m[2]), int(m[3]))
        add(m, (day, day) if day else None)
    for m in _DAY_MONTH_YEAR.finditer(text):
        day = _safe(int(m[3]), MONTHS[m[2].lower()[:3]], int(m[1]))
        add(m, (day, day) if day else None)
    for m in _MONTH_DAY_YEAR.finditer(text):
        day = _safe(int(m[3]), MONTHS[m[1].lower()[:3]], int(m[2]))
        add(m, (day, day) if day else None)
    for m in _MONTH_YEAR.finditer(text):
        add(m, _month_span(int(m[2]), MONTHS[m[1].lower()[:3]]))
    for m in _YEAR_MONTH.finditer(text):
        add(m, _month_span(int(m[1]), int(m[2])))
    found.sort()
    return [(start, span) for start, _, span in found]


def body_dates(text: str, limit: int = MAX_BODY_DATES) -> list[str]:
    """The first ``limit`` dates in an entry's text as ISO strings (a month
    written without a day counts as its first day)."""
    return [span[0].isoformat() for _, span in date_mentions(text)[:limit]]


def _relative(word: str, unit: str, today: date) -> Span:
    if unit == "week":
        start = today - timedelta(days=today.weekday())
        return (
            (start - timedelta(days=7), start - timedelta(days=1))
            if word != "this"
            else (
                start,
                today,
            )
        )
    if unit == "month":
        if word == "this":
            return today.replace(day=1), today
        last = today.replace(day=1) - timedelta(days=1)
        return last.replace(day=1), last
    if word == "this":
        return date(today.year, 1, 1), today
    return date(today.year - 1, 1, 1), date(today.year - 1, 12, 31)


def mentions_time(text: str) -> bool:
    """Whether ``text`` says when something happened: a date or month
    (:func:`date_mentions`) or a relative time ("yesterday", "last Saturday",
    "two weeks ago", "this morning", "on Monday", "in 2023")."""
    return _TIME_WORDS.search(text) is not None or bool(date_mentions(text))


def asks_when(text: str) -> bool:
    """Whether a question asks *when* ("When did Maren buy the cello?", "what
    day was the talk", "how long ago …"), not a conjunction ("what should I
    write when I open …")."""
    return _ASKS_WHEN.search(text.strip()) is not None


def asks_latest(text: str) -> bool:
    """Whether a question asks for the newest of several entries ("the latest
    change", "the most recent", "lately") rather than naming a span."""
    return _LATEST.search(text) is not None


def query_window(text: str, today: date) -> Span | None:
    """The span of time a question asks about, or ``None`` when it names none."""
    for m in _RELATIVE.finditer(text):
        if m[3]:
            day = today if m[3].lower() == "today" else today - timedelta(days=1)
            return day, day
        word = "this" if m[1].lower() == "this" else "last"
        return _relative(word, m[2].lower(), today)
    mentions = date_mentions(text)
    if not mentions:
        year = _YEAR.search(text)
        if year is None:
            return None
        y = int(year[1])
        return date(y, 1, 1), date(y, 12, 31)
    offset, span = mentions[0]
    direction = _DIRECTION.search(text[:offset])
    if direction is None:
        return span
    word = direction[1].lower()
    if word in ("before", "until", "prior to", "earlier than"):
        return date(1900, 1, 1), span[0] - timedelta(days=1)
    return span[1] + timedelta(days=1), date(2200, 12, 31)


def entry_dates(meta: Mapping[str, Any]) -> list[date]:
    """``created``, ``updated`` and the body dates stored in a document's metadata."""
    values: list[object] = [meta.get("created"), meta.get("updated")]
    extra = meta.get("dates")
    if isinstance(extra, list):
        values.extend(extra)
    out: list[date] = []
    for value in values:
        if isinstance(value, str):
            try:
                out.append(date.fromisoformat(value))
            except ValueError:
                continue
    return out


def in_window(dates: Iterable[date], window: Span) -> bool:
    return any(window[0] <= d <= window[1] for d in dates)


def date_prior(meta: Mapping[str, Any], window: Span | None, weight: float) -> float:
    """``weight`` when one of the entry's dates falls in ``window``, else 0."""
    if window is None or weight <= 0:
        return 0.0
    return weight if in_window(entry_dates(meta), window) else 0.0
