"""Query parts and feedback terms: the multi-hop levers.

A question whose answer spans two entries ("what is Ana's job, and where did
she move?") has parts that each match one entry. One OR query over all terms
ranks a document matching one part strongly above the entry that matches the
other part alone; a lane per part (:func:`query_parts`) lets the best match of
each part surface.

A bridge question ("which city did Halvorsen's DBA move to?") names only one
entry; the other shares the first one's *entities* (a person's name, an
identifier). :func:`feedback_terms` takes those from the top hits (bounded
pseudo-relevance feedback): capitalised words, identifiers with digits,
hyphens or underscores, that the question does not contain.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable

from bonsai.core.retrieval.text import STOP_WORDS, content_terms

MAX_PARTS = 3
MIN_PART_TERMS = 2
_SPLIT = re.compile(
    r"[?;!]|\.(?:\s|$)|,\s*(?:and|but|or|then|so)\b|\s(?:and|but|while|whereas)\s+(?=\w+\s)"
    r"|\b(?:as well as|and also|plus)\b",
    re.I,
)
_TOKEN = re.compile(r"(?<![\w-])\w[\w'-]*")
_ID_MARK = re.compile(r"[\d_-]")


_CALENDAR = frozenset(
    m.lower() for m in (*calendar.month_name, *calendar.month_abbr, *calendar.day_name) if m
)
_NAME_NEXT = re.compile(r"\s+[A-Z][a-z]")


def _opens_sentence(text: str, offset: int) -> bool:
    """Whether ``offset`` starts a sentence (or the text, or a line)."""
    i = offset - 1
    while i >= 0 and text[i] in " \t":
        i -= 1
    return i < 0 or text[i] in ".!?:\n"


def query_parts(text: str, max_parts: int = MAX_PARTS) -> list[str]:
    """The clauses of a question that each carry at least ``MIN_PART_TERMS``
    content terms; empty when there is only one (one lane suffices)."""
    pieces = [p.strip(" ,") for p in _SPLIT.split(text) if p and p.strip(" ,")]
    parts = [p for p in pieces if len(content_terms(p)) >= MIN_PART_TERMS]
    if len(parts) < 2:
        return []
    return parts[:max_parts]


def _entity_like(word: str) -> bool:
    """A capitalised word with a lower-case letter, or an identifier: letters
    and digits, hyphens or underscores mixed."""
    if word[0].isupper() and any(c.islower() for c in word):
        return True
    return _ID_MARK.search(word) is not None and any(c.isalpha() for c in word)


def entities(text: str) -> list[str]:
    """Entity-like words of ``text`` in order, without repeats: capitalised
    words (stop words and month or day names aside; at the start of a sentence
    only when the next word is capitalised too, as in a full name) and
    identifiers containing digits, hyphens or underscores."""
    return list(_both(text)[0])


def sentence_start_names(text: str) -> list[str]:
    """The capitalised words :func:`entities` leaves out because they open a
    sentence ("Ana moved to Porto", but also "Decision:"): a name only if the
    same word is an entity elsewhere, which the caller decides."""
    return entity_words(text)[1]


def entity_words(text: str) -> tuple[list[str], list[str]]:
    """:func:`entities` and :func:`sentence_start_names` of ``text`` in one
    pass over its words (what an index stores for every document it writes)."""
    inside, opening = _both(text)
    return list(inside), [w for w in opening if w not in inside]


def _both(text: str) -> tuple[dict[str, None], dict[str, None]]:
    """The entity-like words of ``text`` in order, split into those inside a
    sentence and the capitalised ones opening one ("Decision:", "Agreed on": a
    capital from the sentence, not a name)."""
    inside: dict[str, None] = {}
    opening: dict[str, None] = {}
    for match in _TOKEN.finditer(text):
        word = match.group(0).strip("'-")
        if not word or not _entity_like(word):
            continue
        lower = word.lower()
        if lower in STOP_WORDS or lower in _CALENDAR:
            continue
        if _opens_sentence(text, match.start()) and not _NAME_NEXT.match(text, match.end()):
            if word[0].isupper():
                opening.setdefault(word, None)
        else:
            inside.setdefault(word, None)
    return inside, opening


def feedback_terms(query: str, top_texts: Iterable[str], max_terms: int = 6) -> list[str]:
    """Entity words of the top hits that the query does not already use."""
    have = {t.lower() for t in content_terms(query)}
    out: dict[str, None] = {}
    for text in top_texts:
        for word in entities(text):
            terms = [t.lower() for t in content_terms(word)]
            if terms and not set(terms) <= have:
                out.setdefault(word, None)
            if len(out) >= max_terms:
                return list(out)
    return list(out)
